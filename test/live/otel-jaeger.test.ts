// OpenTelemetry export end to end: `tcab-driver` runs the real Claude Code CLI (installed from npm) and gg against
// the stub model with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real Jaeger (test/support/jaeger.ts); the trace is
// read back through Jaeger's query API: the span tree, GenAI attributes, and the canary key nowhere in it (the model
// is scripted to print it and run a command holding it, so it would be there if the export were not fed scrubbed
// events). `tcab run --otel` exports a workstation run the same way.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../../driver/stub-models/index.ts';
import type { StubModelServer } from '../../driver/stub-models/index.ts';
import type { StubScriptInput } from '../../shared/stub-script.ts';
import { SECRET_MARKER } from '../../driver/scrub.ts';
import { runDirsFor } from '../../driver/run-dirs.ts';
import { Jaeger, tagsOf } from '../support/jaeger.ts';
import type { JaegerSpan, JaegerTrace } from '../support/jaeger.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CANARY = 'sk-ant-fake-canary-otel-export-0000';
let base: string;
let jaeger: Jaeger;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-otel-'));
  jaeger = await Jaeger.start();
});
afterAll(async () => {
  await jaeger?.stop();
  rmSync(base, { recursive: true, force: true });
});

/** This machine's environment (its CA bundle and proxy reach npm) with the run's settings on top. */
function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, command), ...args], { env: { ...process.env, HOME: join(base, 'home'), TCAB_RUN_ROOT: base, ...env }, maxBuffer: 32 << 20, timeout: 300_000 }, (_e, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

/** tcab-driver as in a Pod, against a stub model serving `script`, exporting to Jaeger. */
async function driverRun(runId: string, harness: string, script: StubScriptInput) {
  const stub: StubModelServer = await startStubModelServer({ script });
  try {
    return await run('bin/tcab-driver.js', [], {
      TCAB_RUN_ID: runId,
      TCAB_RUN_SPEC: JSON.stringify({ harness, model: 'claude-sonnet-4-5', prompt: 'do the thing', maxRuntimeSeconds: 240 }),
      TCAB_AUTH_MODE: 'api-key',
      ANTHROPIC_API_KEY: CANARY,
      [`TCAB_BASE_URL_${harness.toUpperCase()}`]: stub.url,
      TCAB_CREDENTIALS_DIR: join(base, 'no-secret-mounted'),
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    });
  } finally {
    await stub.close();
  }
}

function tree(trace: JaegerTrace) {
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  const parentOf = (s: JaegerSpan) => byId.get(s.references.find((r) => r.refType === 'CHILD_OF')?.spanID ?? '');
  const named = (name: string) => trace.spans.filter((s) => s.operationName === name);
  const one = (name: string) => {
    const found = named(name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  return { parentOf, named, one };
}

/** What every exported run has: the run span at the root, its stages and one session under it, usage, no canary. */
function checkRunTrace(text: string, trace: JaegerTrace, harness: string, runId: string) {
  const { parentOf, named, one } = tree(trace);
  const root = one('invoke_workflow tcab.run');
  expect(parentOf(root)).toBeUndefined();
  expect(tagsOf(root)).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.agent.name': harness, 'gen_ai.request.model': 'claude-sonnet-4-5', 'tcab.run.id': runId, 'tcab.outcome': 'succeeded', 'tcab.auth_mode': 'api-key' });
  expect(tagsOf(root)['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  expect(trace.processes[root.processID]!.serviceName).toBe('tcab');
  for (const stage of ['tcab.stage probe_harness', 'tcab.stage teardown']) expect(parentOf(one(stage))).toBe(root);
  const session = one(`invoke_agent ${harness}`);
  expect(parentOf(session)).toBe(root);
  expect(tagsOf(session)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'tcab.session.exit_code': 0 });
  expect(tagsOf(session)['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  expect(session.logs.map((l) => Object.fromEntries(l.fields.map((f) => [f.key, f.value]))).some((f) => f.event === 'tcab.agent' && String(f['tcab.message']).includes(SECRET_MARKER))).toBe(true);
  const tools = trace.spans.filter((s) => s.operationName.startsWith('execute_tool '));
  expect(tools.length).toBeGreaterThanOrEqual(2);
  for (const tool of tools) expect(parentOf(tool)).toBe(session);
  // Scrubbed exactly as the events were: the command that echoed the key carries the marker, and the key is nowhere.
  expect(tools.map((t) => tagsOf(t)['tcab.command']).filter(Boolean).some((c) => String(c).includes(`echo ${SECRET_MARKER}`))).toBe(true);
  expect(text).not.toContain(CANARY);
  expect(text).not.toContain(CANARY.slice(8)); // no fragment of it either
  return { root, session, tools, named };
}

describe('OpenTelemetry export to a real Jaeger', () => {
  it('exports a Claude Code run (installed from npm, stub model) as GenAI spans, with the key scrubbed', async () => {
    const runId = 'otel-claude';
    const workspace = runDirsFor(base, runId).workspace;
    const { code, stdout, stderr } = await driverRun(runId, 'claude', {
      steps: [
        { thinking: 'Check the key.', text: `The key is ${CANARY}.`, tool: { name: 'Bash', args: { command: `echo ${CANARY}`, description: 'Echo' } } },
        { tool: { name: 'Write', args: { file_path: `${workspace}/hello.txt`, content: 'hello\n' } } },
        { tool: { name: 'Task', args: { description: 'Sub task', prompt: 'SUBAGENT-MARKER do nothing', subagent_type: 'general-purpose' } } },
        { text: 'All done.' },
      ],
      rules: [{ when_last_user_contains: 'SUBAGENT-MARKER', step: { text: 'Subagent finished.' } }],
    });
    expect(code, stderr).toBe(0);
    expect(stdout + stderr).not.toContain(CANARY);
    expect(stderr).toMatch(/"msg":"OpenTelemetry: \d+ span\(s\) exported, 0 dropped"/);
    const { text, trace } = await jaeger.runTrace(runId, 8);
    const { root, session, tools, named } = checkRunTrace(text, trace, 'claude', runId);
    expect(tree(trace).parentOf(tree(trace).one('tcab.stage install_harness'))).toBe(root);
    expect(tagsOf(root)['tcab.harness.version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(tools.map((t) => t.operationName).sort()).toEqual(['execute_tool Bash', 'execute_tool Write']);
    expect(tools.map((t) => tagsOf(t))).toContainEqual(expect.objectContaining({ 'gen_ai.tool.name': 'Write', 'tcab.tool.kind': 'write', 'file.path': `${workspace}/hello.txt`, 'tcab.tool.success': true }));
    const subagents = named('invoke_agent general-purpose');
    expect(subagents).toHaveLength(1);
    expect(tree(trace).parentOf(subagents[0]!)).toBe(session);
    expect(tagsOf(subagents[0]!)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'tcab.subagent': true });
    expect(typeof tagsOf(session)['gen_ai.conversation.id']).toBe('string');
  });

  it('exports a gg run the same way', async () => {
    const runId = 'otel-gg';
    const { code, stderr } = await driverRun(runId, 'gg', {
      steps: [
        { thinking: 'Check the key.', text: `The key is ${CANARY}.`, tool: { name: 'shell', args: { command: `echo ${CANARY}` } } },
        { tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } },
        { text: 'Done.' },
      ],
    });
    expect(code, stderr).toBe(0);
    const { text, trace } = await jaeger.runTrace(runId, 6);
    const { tools } = checkRunTrace(text, trace, 'gg', runId);
    expect(tools.map((t) => t.operationName).sort()).toEqual(['execute_tool shell', 'execute_tool write_file']);
    expect(tools.map((t) => tagsOf(t))).toContainEqual(expect.objectContaining({ 'tcab.tool.kind': 'command', 'process.exit.code': 0 }));
  });

  it('exports a workstation run with `tcab run --otel`, saying how many spans went out', async () => {
    const runId = 'otel-cli-gg';
    const { code, stderr } = await run('cli/main.ts', ['run', '--harness', 'gg', '--stub', '--model', 'claude-sonnet-4-5', '--prompt', 'Create hello.txt', '--json', '--otel', '--run-id', runId], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${jaeger.otlpEndpoint}/v1/traces` });
    expect(code, stderr).toBe(0);
    const exported = /tcab: OpenTelemetry: (\d+) span\(s\) exported, 0 dropped/.exec(stderr);
    expect(exported, stderr).not.toBeNull();
    const { trace } = await jaeger.runTrace(runId, Number(exported![1]));
    expect(trace.spans).toHaveLength(Number(exported![1]));
    const { parentOf, one } = tree(trace);
    expect(parentOf(one('invoke_agent gg'))).toBe(one('invoke_workflow tcab.run'));
  });
});
