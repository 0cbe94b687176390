// `tcab eval run` on a workstation (issue 39): an evaluation file read and checked, every slot run for real (the
// scripted harness: real processes, the driver as root, the agent as uid 1000), the results directory, the summary
// recomputed from the stored results, a killed evaluation resumed running only what was left, and the command itself
// with gg against the stub model.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../shared/errors.ts';
import { HarnessEvent } from '../../../shared/events.ts';
import { RunResult } from '../../../shared/run.ts';
import { EvaluationStatus } from '../../../shared/evaluation/schema.ts';
import { evaluationSlots } from '../../../shared/evaluation/slots.ts';
import { summarizeEvaluation } from '../../../shared/evaluation/summary.ts';
import { createScriptedHarness } from '../../../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../../../test/support/scripted-harness.ts';
import { parseEvaluationDocument } from './document.ts';
import type { EvaluationDocument } from './document.ts';
import { runEvaluationLocally } from './local-run.ts';
import type { FinishedRun } from './local-run.ts';
import { ResultsDir } from './results-dir.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const RUN_UID = 1000;
let sandbox: string;
let base: string;
let harness: ScriptedHarness;

beforeAll(() => {
  expect(process.getuid!()).toBe(0); // a root driver and an unprivileged agent
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-eval-'));
  chmodSync(sandbox, 0o755);
  base = join(sandbox, 'base');
  mkdirSync(join(base, 'runs'), { recursive: true, mode: 0o755 });
  mkdirSync(join(base, `npm-cache-${RUN_UID}`), { mode: 0o700 });
  chownSync(join(base, `npm-cache-${RUN_UID}`), RUN_UID, RUN_UID);
  harness = createScriptedHarness();
});
afterAll(() => {
  rmSync(sandbox, { recursive: true, force: true });
  harness.dispose();
});

/** The answer must be 42: the "right" test case's agent writes 42, the "wrong" one's 41. */
const FILE = `
apiVersion: tcab.dev/v1alpha1
kind: Evaluation
metadata: { name: answers }
spec:
  matrix:
    - harness: scripted
      models: [model-a, vendor/model-b]
  testCases:
    - name: right
      prompt: answer:42
      testCase: { check: { command: 'test "$(cat answer.txt)" = 42 && printf 1 > "$TCAB_REWARD_FILE"' } }
    - name: wrong
      prompt: answer:41
      testCase: { check: { command: 'test "$(cat answer.txt)" = 42' } }
  repeats: 2
  template: { maxRuntimeSeconds: 120 }
`;

const env = { TCAB_RUN_ROOT: '', ANTHROPIC_API_KEY: 'sk-ant-fake-eval-0123456789' };

function evaluate(doc: EvaluationDocument, results: ResultsDir, options: { parallel?: number; signal?: AbortSignal; onRun?: (run: FinishedRun) => void } = {}) {
  return runEvaluationLocally({ doc, results, parallel: options.parallel ?? 2, stub: false, env: { ...env, TCAB_RUN_ROOT: base }, signal: options.signal ?? new AbortController().signal, harnessesRoot: harness.root, onRun: options.onRun });
}

describe('an evaluation file', () => {
  it('is an Evaluation object or a bare spec; a bad one names the file and the field', () => {
    const doc = parseEvaluationDocument(FILE, 'answers.yaml');
    expect(doc.name).toBe('answers');
    expect(doc.spec.repeats).toBe(2);
    const bare = parseEvaluationDocument(JSON.stringify({ matrix: [{ harness: 'gg', models: ['stub'] }], testCases: [{ name: 'one', prompt: 'x' }] }), '/x/My Eval.json');
    expect(bare.name).toBe('my-eval');
    expect(() => parseEvaluationDocument('kind: Evaluation\nmetadata: { name: Bad_Name }\nspec: {}\n', 'e.yaml')).toThrow(/^e\.yaml: metadata\.name: must be a lower case DNS name/);
    expect(() => parseEvaluationDocument(FILE.replace('repeats: 2', 'repeats: 0'), 'e.yaml')).toThrow(/^e\.yaml: spec\.repeats: /);
    expect(() => parseEvaluationDocument('matrix: [', 'e.yaml')).toThrow(/^e\.yaml: not YAML or JSON/);
    // Test cases from a ConfigMap are read on a cluster: here, with or without inline ones, refused naming the field.
    const fromMap = 'matrix: [{ harness: gg, models: [stub] }]\ntestCasesFrom: [{ configMap: { name: cases } }]\n';
    expect(() => parseEvaluationDocument(fromMap, 'e.yaml')).toThrow(/^e\.yaml: testCasesFrom\[0\]\.configMap "cases": a ConfigMap is read on a cluster/);
    expect(() => parseEvaluationDocument(FILE.replace('  repeats: 2', '  testCasesFrom: [{ configMap: { name: cases } }]\n  repeats: 2'), 'e.yaml')).toThrow(/^e\.yaml: spec\.testCasesFrom\[0\]\.configMap "cases": a ConfigMap is read on a cluster/);
    expect(() => parseEvaluationDocument('matrix: [{ harness: gg, models: [stub] }]\n', 'e.yaml')).toThrow(/^e\.yaml: testCases: give the test cases/);
  });
});

describe('a hostile evaluation file', () => {
  const attempt = (text: string) => {
    try {
      return parseEvaluationDocument(text, 'e.yaml');
    } catch (error) {
      return error;
    }
  };
  test.prop([fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ kind: 'Evaluation', metadata: { name: 'x' }, spec: v })))], { numRuns: 300 })(
    'any text is an evaluation or an InvalidInputError naming the file, never another error',
    (text) => {
      const outcome = attempt(text);
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(InvalidInputError);
        expect(outcome.message.startsWith('e.yaml: ')).toBe(true);
      } else expect(outcome).toHaveProperty('spec');
    },
  );

  it('a YAML alias bomb is refused, not expanded', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n');
    expect(attempt(bomb)).toBeInstanceOf(InvalidInputError);
  });
});

describe('runEvaluationLocally', () => {
  it('runs every slot, stores each run (result, events, trajectory) and summarizes exactly what was stored', async () => {
    const doc = parseEvaluationDocument(FILE, 'answers.yaml');
    const results = ResultsDir.create(join(sandbox, 'full'), doc);
    const seen: string[] = [];
    const outcome = await evaluate(doc, results, { onRun: (run) => seen.push(run.slot.name) });
    const slots = evaluationSlots(doc.name, doc.spec);
    expect(outcome).toMatchObject({ ran: 8, kept: 0 });
    expect(seen.sort()).toEqual(slots.map((s) => s.name).sort());
    // The status is what the stored results say, recomputed here from the files alone.
    const stored = slots.map((slot) => ({ cell: slot.cell, testCase: slot.testCase, final: true, result: RunResult.parse(JSON.parse(readFileSync(join(results.runDir(slot), 'result.json'), 'utf8'))) }));
    expect(outcome.status).toEqual(summarizeEvaluation(doc.spec, stored));
    expect(EvaluationStatus.parse(outcome.status)).toEqual(outcome.status);
    expect(outcome.status.cells!.map((c) => [c.model, c.scored, c.passed, c.passRate, c.meanReward, c.passAtK?.value, c.passHatK?.value])).toEqual([
      ['model-a', 4, 2, 0.5, 1, 0.5, 0.5],
      ['vendor/model-b', 4, 2, 0.5, 1, 0.5, 0.5],
    ]);
    for (const slot of slots) {
      const dir = results.runDir(slot);
      const events = readFileSync(join(dir, 'events.ndjson'), 'utf8').trim().split('\n').map((line) => HarnessEvent.parse(JSON.parse(line)));
      expect(events.some((e) => e.type === 'agent')).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, 'atif.json'), 'utf8'))).toHaveProperty('steps');
    }
  });

  it('killed mid-way (its signal), it stops starting runs; resumed, it runs only what was left or cancelled', async () => {
    const doc = parseEvaluationDocument(FILE, 'answers.yaml');
    const results = ResultsDir.create(join(sandbox, 'killed'), doc);
    const abort = new AbortController();
    const first = await evaluate(doc, results, { parallel: 1, signal: abort.signal, onRun: () => abort.abort() });
    expect(first.ran).toBe(1);
    expect(first.status.runs).toMatchObject({ total: 8, final: 1 });
    const done = evaluationSlots(doc.name, doc.spec).filter((slot) => results.isDone(slot)).map((s) => s.name);
    expect(done).toHaveLength(1);
    const reopened = ResultsDir.open(join(sandbox, 'killed'));
    expect(reopened.doc).toEqual(doc);
    const again: string[] = [];
    const second = await evaluate(reopened.doc, reopened.results, { onRun: (run) => again.push(run.slot.name) });
    expect(second).toMatchObject({ ran: 7, kept: 1 });
    expect(again).not.toContain(done[0]);
    expect(second.status.runs).toMatchObject({ total: 8, final: 8 });
    expect(second.status.phase).toBe('Completed');
  });

  it('refuses an unknown harness before running anything, naming the matrix entry', async () => {
    const doc = parseEvaluationDocument(FILE.replace('harness: scripted', 'harness: nope'), 'answers.yaml');
    const results = ResultsDir.create(join(sandbox, 'unknown'), doc);
    await expect(evaluate(doc, results)).rejects.toThrow(/^matrix\[0\]\.harness: unknown harness "nope"/);
    expect(readdirSync(join(sandbox, 'unknown', 'runs'))).toEqual([]);
  });
});

describe('tcab eval run', () => {
  const tcab = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), 'eval', 'run', ...args], { env: { PATH: process.env.PATH ?? '', HOME: sandbox, TCAB_RUN_ROOT: base }, timeout: 120_000 }, (_e, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
    });

  it('refuses test cases from a ConfigMap (read on a cluster): exit 2, the field named, nothing written', async () => {
    const file = join(sandbox, 'from-map.yaml');
    writeFileSync(file, 'kind: Evaluation\nmetadata: { name: from-map }\nspec:\n  matrix: [{ harness: gg, models: [stub] }]\n  testCases: [{ name: x, prompt: y }]\n  testCasesFrom: [{ configMap: { name: cases } }]\n');
    const out = join(sandbox, 'from-map-out');
    const { code, stderr } = await tcab([file, '--stub', '--out', out]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${file}: spec.testCasesFrom[0].configMap "cases": a ConfigMap is read on a cluster (tcab eval apply, or kubectl apply, the Evaluation); here, give the test cases inline (testCases), in a directory or in git`);
    expect(existsSync(out)).toBe(false);
  });

  it('runs the test cases of a directory and of a git branch, records them (and the commit) in evaluation.json; a resume runs what was recorded', async () => {
    const root = join(sandbox, 'sources');
    mkdirSync(join(root, 'cases'), { recursive: true });
    writeFileSync(join(root, 'cases', 'hello.yaml'), 'prompt: Create hello.txt\ntestCase: { check: { command: "grep -q hello hello.txt" } }\n');
    writeFileSync(join(root, 'cases', 'README.md'), 'not a test case');
    // A git repository with a branch holding one more test case; cloned by plain path, relative to the file.
    const repo = join(root, 'repo');
    mkdirSync(join(repo, 'evals'), { recursive: true });
    writeFileSync(join(repo, 'evals', 'also.json'), '{"prompt": "Create hello.txt too", "testCase": {"check": {"command": "test -f hello.txt"}}}');
    const git = (...args: string[]) => new Promise<string>((resolve, reject) => execFile('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], (e, out) => (e ? reject(e) : resolve(out.trim()))));
    await git('init', '--quiet', '--initial-branch=main');
    await git('add', '.');
    await git('commit', '--quiet', '-m', 'cases');
    const commit = await git('rev-parse', 'HEAD');
    const file = join(root, 'from-sources.yaml');
    writeFileSync(file, 'matrix: [{ harness: gg, models: [stub] }]\ntestCasesFrom:\n  - directory: cases\n  - git: { url: ./repo, ref: main, path: evals }\n');
    const out = join(sandbox, 'sources-out');
    const { code, stdout, stderr } = await tcab([file, '--stub', '--out', out, '--json']);
    expect(code, stderr).toBe(0);
    const runs = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; test_case?: string; check?: { passed: boolean } });
    expect(runs.filter((l) => l.type === 'run').map((l) => [l.test_case, l.check?.passed]).sort()).toEqual([['also', true], ['hello', true]]);
    const stored = JSON.parse(readFileSync(join(out, 'evaluation.json'), 'utf8')) as { spec: { testCases: { name: string; prompt: string }[]; testCasesFrom?: unknown }; sources: unknown };
    expect(stored.spec.testCases.map((t) => [t.name, t.prompt])).toEqual([['hello', 'Create hello.txt'], ['also', 'Create hello.txt too']]);
    expect(stored.spec).not.toHaveProperty('testCasesFrom');
    expect(stored.sources).toEqual([{ index: 0, directory: join(root, 'cases') }, { index: 1, git: { url: './repo', ref: 'main', path: 'evals', commit } }]);
    // The directory changes: with the file, the resume is refused (other test cases); without it, it runs what was recorded.
    writeFileSync(join(root, 'cases', 'hello.yaml'), 'prompt: Something else\n');
    expect(await tcab([file, '--resume', out, '--stub'])).toMatchObject({ code: 2, stderr: expect.stringContaining('the test cases of its sources differ') });
    const resumed = await tcab(['--resume', out, '--stub', '--json']);
    expect(JSON.parse(resumed.stdout.trim())).toMatchObject({ type: 'summary', ran: 0, kept: 2 });
  });

  it('runs gg against the stub: NDJSON per run then the summary, the results directory, summary.json and summary.csv', async () => {
    const file = join(sandbox, 'gg.yaml');
    writeFileSync(file, 'matrix: [{ harness: gg, models: [stub] }]\ntestCases:\n  - { name: hello, prompt: "Create hello.txt", testCase: { check: { command: "grep -q hello hello.txt" } } }\nrepeats: 2\n');
    const out = join(sandbox, 'gg-out');
    const { code, stdout, stderr } = await tcab([file, '--stub', '--parallel', '2', '--out', out, '--json']);
    expect(code, stderr).toBe(0);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; status?: EvaluationStatus; outcome?: string });
    expect(lines.map((l) => l.type)).toEqual(['run', 'run', 'summary']);
    const summary = lines.at(-1)!;
    expect(summary.status!.cells![0]).toMatchObject({ harness: 'gg', model: 'stub', scored: 2, passed: 2, passRate: 1 });
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toEqual(summary.status);
    expect(readFileSync(join(out, 'summary.csv'), 'utf8').split('\n')[1]).toMatch(/^gg,stub,2,2,2,2,0,0,1,/);
    // A results directory is not overwritten, and a resume with another file is refused.
    expect(await tcab([file, '--out', out])).toMatchObject({ code: 2, stderr: expect.stringContaining(`tcab: --out: ${out} exists and is not empty`) });
    writeFileSync(join(sandbox, 'other.yaml'), 'matrix: [{ harness: gg, models: [other] }]\ntestCases: [{ name: x, prompt: y }]\n');
    expect(await tcab([join(sandbox, 'other.yaml'), '--resume', out])).toMatchObject({ code: 2, stderr: expect.stringContaining('is not the evaluation') });
    // Resumed when complete: nothing runs again.
    const resumed = await tcab(['--resume', out, '--stub', '--json']);
    expect(JSON.parse(resumed.stdout.trim())).toMatchObject({ type: 'summary', ran: 0, kept: 2 });
    expect(existsSync(join(out, 'evaluation.json'))).toBe(true);
  });
});
