// `tcab run` on a workstation through the model gateway (issue 34), with the newest release of each harness CLI the
// stub covers, on its `tools` scenario: the provider (the stub) is presented the real key on every request and
// never a token; the real key is in none of the run's events or its result; the wire account is what the stub
// served, and where the harness's own report agrees with it (or, for OpenCode, whose title request is not in its
// usage, says it does not).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../../harnesses/registry.ts';
import { loadScenarios } from '../../driver/verify/run-scenarios.ts';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { defaultRunBase, runDirsFor } from '../../driver/run-dirs.ts';
import { renderScript, startStubModelServer } from '../../driver/stub-models/index.ts';
import { RunSpec } from '../../shared/run.ts';
import { TOKEN_PREFIX } from '../../gateway/index.ts';

/** The "real" key the gateway holds (the stub stands for the provider): obviously fake. */
const KEY = 'sk-fake-workstation-gateway-key-4410';
/** Whether the harness's own usage matches the wire's (OpenCode leaves its title-generation request out). */
const AGREES: Record<string, boolean> = { claude: true, codex: true, gemini: true, qwen: true, opencode: false };

const presented = (r: { headers: Record<string, string>; query: Record<string, string> }) => r.headers['x-api-key'] ?? r.headers['x-goog-api-key'] ?? r.headers.authorization?.replace(/^Bearer /i, '') ?? r.query.key;

describe('tcab run through the model gateway (newest releases, offline)', () => {
  it.each(Object.keys(AGREES))('%s: the provider gets the key, the run a token; the wire account is the stub\'s', async (slug) => {
    const entry = getHarness(slug);
    const scenario = loadScenarios(entry).find(([name]) => name === 'tools')![1];
    const env = process.env;
    const runId = `gw-live-${slug}-${Date.now().toString(36)}`;
    const dirs = runDirsFor(defaultRunBase(env), runId);
    const stub = await startStubModelServer({ script: renderScript(scenario.script, { workdir: dirs.workspace, home: dirs.home }) });
    const sink = new MemorySink();
    try {
      const result = await executeRun(RunSpec.parse({ harness: slug, model: scenario.model ?? 'mock-model', prompt: scenario.prompt, maxRuntimeSeconds: 600 }), {
        runId,
        env,
        sinks: [sink],
        user: resolveRunUser(env, process.getuid?.() ?? 1000),
        credentialSource: { kind: 'home', home: join(defaultRunBase(env), 'no-credentials') },
        stub: { baseUrl: stub.url, apiKey: KEY },
        homeFiles: scenario.home_files,
      });
      const events = sink.events.map((e) => e.event);
      expect(result.outcome, JSON.stringify(events.filter((e) => e.type === 'error'))).toBe('succeeded');
      const model = stub.requests.filter((r) => r.wire !== 'none');
      expect(model.length).toBeGreaterThan(0);
      for (const r of model) expect(presented(r)).toBe(KEY);
      expect(JSON.stringify(stub.requests.map((r) => [r.headers, r.query]))).not.toContain(TOKEN_PREFIX);
      expect(JSON.stringify({ result, events })).not.toContain(KEY);
      // The wire: every answer the stub gave went through the gateway and was measured.
      expect(result.wire).not.toBeNull();
      expect(result.wire!.requests).toBe(stub.requests.filter((r) => r.path !== '/' && r.method !== 'HEAD').length);
      expect(result.wire!.tokens).not.toBeNull();
      const disagrees = events.filter((e) => e.type === 'warning' && e.code === 'usage_disagrees');
      process.stderr.write(`gateway live ${slug} ${result.harness_version}: wire ${JSON.stringify(result.wire)} harness ${JSON.stringify(result.tokens)} disagreements ${disagrees.length}\n`);
      expect(disagrees.length === 0).toBe(AGREES[slug]);
    } finally {
      await stub.close();
    }
  }, 600_000);
});
