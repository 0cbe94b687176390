// The shipped example evaluation (deploy/examples/evaluation-stub.yaml) as a user runs it: `tcab eval run FILE --stub
// --parallel 2` with the real Claude Code, Codex and gg against the stub model (their newest releases, installed as
// any run installs them), killed mid-way and resumed. Every figure is checked against what the run results say.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunResult } from '../../../shared/run.ts';
import { EvaluationStatus } from '../../../shared/evaluation/schema.ts';
import { evaluationSlots } from '../../../shared/evaluation/slots.ts';
import { readEvaluationDocument } from './document.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLE = join(ROOT, 'deploy/examples/evaluation-stub.yaml');
let sandbox: string;
beforeAll(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-eval-example-'));
  chmodSync(sandbox, 0o755);
});
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

interface Line {
  type: string;
  run?: string;
  outcome?: string;
  test_case?: string;
  ran?: number;
  kept?: number;
  status?: EvaluationStatus;
}

/** `tcab eval run ARGS --json`; `stopAfter` runs, it is sent SIGTERM (the way a killed evaluation ends). */
function evalRun(args: string[], stopAfter?: number): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), 'eval', 'run', ...args, '--json'], { env: { ...process.env, TCAB_RUN_ROOT: sandbox }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Line[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (text) => {
    lines.push(JSON.parse(text) as Line);
    if (stopAfter !== undefined && lines.filter((l) => l.type === 'run').length === stopAfter) child.kill('SIGTERM');
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, lines, stderr })));
}

describe('deploy/examples/evaluation-stub.yaml', () => {
  it('runs with --stub --parallel 2; killed after 4 runs and resumed, it runs only what was left; the summary is what the results say', async () => {
    const doc = readEvaluationDocument(EXAMPLE);
    const slots = evaluationSlots(doc.name, doc.spec);
    expect(slots).toHaveLength(12);
    const out = join(sandbox, 'results');
    const killed = await evalRun([EXAMPLE, '--stub', '--parallel', '2', '--out', out], 4);
    expect(killed.code, killed.stderr).toBe(130);
    expect(killed.lines.filter((l) => l.type === 'run').length).toBeGreaterThanOrEqual(4);

    const resumed = await evalRun(['--resume', out, '--stub', '--parallel', '2']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = resumed.lines.at(-1)!;
    expect(summary.type).toBe('summary');
    // Kept: every run of the first call that ended on its own; run again: the rest (never started, or cancelled in
    // flight by the kill), each once.
    const standing = killed.lines.filter((l) => l.type === 'run' && l.outcome !== 'cancelled' && l.outcome !== 'infrastructure_failed').map((l) => l.run!);
    expect(standing.length).toBeGreaterThanOrEqual(4 - 2); // at most --parallel were in flight at the kill
    const again = resumed.lines.filter((l) => l.type === 'run').map((l) => l.run!);
    expect(again.toSorted()).toEqual(slots.map((slot) => slot.name).filter((name) => !standing.includes(name)).toSorted());
    expect([summary.kept, summary.ran]).toEqual([standing.length, 12 - standing.length]);
    const results = new Map(slots.map((slot) => [slot.name, RunResult.parse(JSON.parse(readFileSync(join(out, 'runs', slot.name, 'result.json'), 'utf8')))]));

    // Every harness solved "hello" (the stub's session writes hello.txt) and not "goodbye": the check decided.
    for (const slot of slots) {
      const result = results.get(slot.name)!;
      expect(result.outcome, slot.name).toBe('succeeded');
      expect(result.check, slot.name).toMatchObject({ passed: slot.testCase === 'hello', reward: slot.testCase === 'hello' ? 1 : null });
    }
    const status = EvaluationStatus.parse(summary.status);
    expect(status.phase).toBe('Completed');
    expect(status.cells!.map((c) => [c.harness, c.runs, c.final, c.scored, c.passed, c.passRate, c.meanReward, c.passAtK?.value, c.passHatK?.value])).toEqual([
      ['claude', 4, 4, 4, 2, 0.5, 1, 0.5, 0.5],
      ['codex', 4, 4, 4, 2, 0.5, 1, 0.5, 0.5],
      ['gg', 4, 4, 4, 2, 0.5, 1, 0.5, 0.5],
    ]);
    expect(status.comparisons).toEqual([]);
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toEqual(summary.status);
  }, 600_000);
});
