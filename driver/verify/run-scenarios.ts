// `tcab harnesses verify` and `npm run fixtures:record`: install the newest release of a harness, probe it, run
// its scripted scenarios against the stub model, and judge the translation. With `record`, each session's raw
// output is saved as a fixture named like the reference samples (<slug>-<version>-<scenario>.jsonl).
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Scenario } from '../../shared/scenario.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import type { HarnessEntry } from '../../harnesses/registry.ts';
import { RunSpec } from '../../shared/run.ts';
import { executeRun } from '../run.ts';
import { MemorySink } from '../sinks/sink.ts';
import { resolveRunUser } from '../run-user.ts';
import { runDirsFor, defaultRunBase } from '../run-dirs.ts';
import { renderScript, startStubModelServer } from '../stub-models/index.ts';
import { STUB_API_KEY } from '../offline-stub.ts';
import { evaluateScenario } from './evaluate.ts';
import type { ScenarioReport } from './evaluate.ts';

export interface HarnessVerifyReport {
  harness: string;
  verdict: 'pass' | 'fail' | 'skipped';
  reason?: string;
  scenarios: ScenarioReport[];
  recorded: string[];
}

export function loadScenarios(entry: HarnessEntry): [string, Scenario][] {
  const dir = join(entry.dir, 'scenarios');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const parsed = Scenario.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
      if (!parsed.success) throw new InvalidInputError(join(dir, file), formatIssues(parsed.error));
      return [file.replace(/\.json$/, ''), parsed.data] as [string, Scenario];
    });
}

export async function verifyHarness(
  entry: HarnessEntry,
  options: { env: Readonly<Record<string, string | undefined>>; record?: boolean; onProgress?: (line: string) => void },
): Promise<HarnessVerifyReport> {
  const { manifest } = entry;
  const report: HarnessVerifyReport = { harness: manifest.slug, verdict: 'pass', scenarios: [], recorded: [] };
  if (!manifest.stub_wire) return { ...report, verdict: 'skipped', reason: manifest.offline_note ?? 'cannot run against the stub model' };
  const scenarios = loadScenarios(entry);
  if (scenarios.length === 0) return { ...report, verdict: 'skipped', reason: 'no scenarios/ folder' };

  const base = defaultRunBase(options.env);
  for (const [name, scenario] of scenarios) {
    options.onProgress?.(`${manifest.slug}: ${name}`);
    const runId = `verify-${manifest.slug}-${name}-${Date.now().toString(36)}`;
    const dirs = runDirsFor(base, runId);
    const stub = await startStubModelServer({ script: renderScript(scenario.script, { workdir: dirs.workspace, home: dirs.home }) });
    const recordDir = mkdtempSync(join(tmpdir(), 'tcab-verify-'));
    const sink = new MemorySink();
    try {
      const result = await executeRun(RunSpec.parse({ harness: manifest.slug, model: scenario.model ?? 'mock-model', prompt: scenario.prompt, maxRuntimeSeconds: 600 }), {
        runId,
        env: options.env,
        sinks: [sink],
        user: resolveRunUser(options.env, process.getuid?.() ?? 1000),
        credentialSource: { kind: 'home', home: join(base, 'no-credentials') },
        stub: { baseUrl: stub.url, apiKey: STUB_API_KEY },
        recordDir,
        homeFiles: scenario.home_files,
      });
      report.scenarios.push(evaluateScenario(name, scenario, sink.events.map((e) => e.event), result));
      if (options.record && result.harness_version) {
        const target = join(entry.dir, 'fixtures', `${manifest.slug}-${result.harness_version}-${name}`);
        copyFileSync(join(recordDir, 'session-1.stdout'), `${target}.jsonl`);
        report.recorded.push(`${target}.jsonl`);
        const stderr = join(recordDir, 'session-1.stderr');
        if (existsSync(stderr) && statSync(stderr).size > 0) {
          copyFileSync(stderr, `${target}.stderr`);
          report.recorded.push(`${target}.stderr`);
        }
        // Report files the CLI wrote beside its stream (e.g. copilot's usage file): session-1.<name>.
        for (const file of readdirSync(recordDir).filter((f) => f.startsWith('session-1.') && !/\.(stdout|stderr)$/.test(f))) {
          const copy = `${target}.${file.slice('session-1.'.length)}`;
          copyFileSync(join(recordDir, file), copy);
          report.recorded.push(copy);
        }
      }
    } finally {
      await stub.close();
      rmSync(recordDir, { recursive: true, force: true });
    }
  }
  report.verdict = report.scenarios.every((s) => s.verdict === 'pass') ? 'pass' : 'fail';
  return report;
}
