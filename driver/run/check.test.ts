// The test case's check (issue 39) against a root driver and an unprivileged agent (uid 1000; these tests run as
// root here and in CI): the verdict is the shipped check's, whatever the agent did to the workspace, and the
// agent's links never make the driver write outside it. The harness is the scripted one (real processes, no network).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../run.ts';
import { MemorySink } from '../sinks/sink.ts';
import { resolveRunUser } from '../run-user.ts';
import { RunResult, RunSpec } from '../../shared/run.ts';
import { RunProgress } from '../../shared/run-progress.ts';
import type { TestCaseCheck } from '../../shared/run.ts';
import type { RunSpecInput } from '../../shared/run.ts';
import { processRunning } from '../leftovers.ts';
import { createScriptedHarness } from '../../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { treeSnapshot } from '../../test/support/tree-snapshot.ts';
import { CHECK_OUTPUT_TAIL_CHARS } from './check.ts';

const RUN_UID = 1000;
let sandbox: string;
let base: string;
let harness: ScriptedHarness;
let failingInstall: ScriptedHarness;

beforeAll(() => {
  expect(process.getuid!()).toBe(0); // a root driver and an unprivileged agent
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-check-'));
  chmodSync(sandbox, 0o755);
  mkdirSync(join(sandbox, 'victim-dir'), { mode: 0o777 });
  writeFileSync(join(sandbox, 'victim-dir/helper.sh'), 'root file\n', { mode: 0o666 });
  writeFileSync(join(sandbox, 'victim'), 'root secret\n', { mode: 0o600 });
  base = join(sandbox, 'base');
  mkdirSync(join(base, 'runs'), { recursive: true, mode: 0o755 });
  mkdirSync(join(base, `npm-cache-${RUN_UID}`), { mode: 0o700 });
  chownSync(join(base, `npm-cache-${RUN_UID}`), RUN_UID, RUN_UID);
  harness = createScriptedHarness();
  failingInstall = createScriptedHarness({ installFails: true });
});

afterAll(() => {
  rmSync(sandbox, { recursive: true, force: true });
  harness.dispose();
  failingInstall.dispose();
});

/** The shipped check: the answer must equal the expected one; it sources a helper and writes a reward of 1. */
const SHIPPED: TestCaseCheck = {
  command: 'sh tests/check.sh',
  timeoutSeconds: 60,
  files: [
    { path: 'tests/check.sh', content: '. tests/lib/helper.sh\ntest "$(cat answer.txt)" = "$(cat expected.txt)" || { echo "wrong answer: $(cat answer.txt)"; exit 1; }\necho "right answer"\nprintf 1 > "$TCAB_REWARD_FILE"\n' },
    { path: 'tests/lib/helper.sh', content: 'helper_loaded=yes\n' },
    { path: 'expected.txt', content: '42\n' },
  ],
};

let counter = 0;
async function run(prompt: string, check: TestCaseCheck | undefined, options: { harness?: ScriptedHarness } = {}) {
  const sink = new MemorySink();
  const runId = `check-${++counter}`;
  const env = { TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: 'sk-ant-fake-check-0123456789' };
  const spec: RunSpecInput = { harness: 'scripted', model: 'claude-sonnet-4-5', prompt, ...(check ? { testCase: { check } } : {}) };
  const result = await executeRun(RunSpec.parse(spec), {
    runId,
    env,
    sinks: [sink],
    user: resolveRunUser(env, process.getuid!()),
    credentialSource: { kind: 'home', home: join(sandbox, 'no-home') },
    harnessesRoot: (options.harness ?? harness).root,
    keep: true,
  });
  expect(RunResult.parse(result)).toEqual(result);
  return { result, events: sink.events.map((e) => e.event), progresses: sink.progresses, runRoot: join(base, 'runs', runId) };
}

describe("a test case's check", () => {
  it('passes on the right answer: exit 0, the reward it wrote, its output, after the sessions', async () => {
    const { result } = await run('answer:42', SHIPPED);
    expect(result.outcome).toBe('succeeded');
    expect(result.check).toMatchObject({ passed: true, exit_code: 0, reward: 1 });
    expect(result.check!.output_tail).toBe('right answer');
    expect(result.check!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("says once, as it starts, that the check runs (the Run's Checking phase): after the last event, with the command's first line, scrubbed", async () => {
    const key = 'sk-ant-fake-check-0123456789';
    const { result, events, progresses } = await run('answer:42', { command: `echo ${key} >/dev/null; sh tests/check.sh\necho second line`, timeoutSeconds: 60, files: SHIPPED.files });
    expect(result.check?.passed).toBe(true);
    expect(progresses).toHaveLength(1);
    expect(progresses[0]).toEqual({ phase: 'Checking', at: expect.any(String), command: expect.stringContaining('sh tests/check.sh') });
    expect(progresses[0]!.command).not.toContain(key);
    expect(progresses[0]!.command).not.toContain('second line');
    // Between the sessions' events and the teardown's.
    const teardown = events.find((e) => e.type === 'system' && e.stage === 'teardown')!;
    expect(Date.parse(progresses[0]!.at)).toBeLessThanOrEqual(Date.parse(teardown.timestamp));
    expect(RunProgress.parse(progresses[0])).toEqual(progresses[0]);
  });

  it('a long check command is cut to 200 characters in the progress, never past the schema', async () => {
    const { progresses } = await run('answer:42', { command: `true ${'x'.repeat(500)}`, timeoutSeconds: 60 });
    expect(progresses[0]!.command).toHaveLength(200);
    expect(progresses[0]!.command!.endsWith('…')).toBe(true);
  });

  it('fails on a wrong answer, with no reward and the output saying why', async () => {
    const { result } = await run('answer:41', SHIPPED);
    expect(result.outcome).toBe('succeeded'); // the agent's run succeeded; its work did not
    expect(result.check).toEqual({ passed: false, exit_code: 1, reward: null, duration_ms: result.check!.duration_ms, output_tail: 'wrong answer: 41' });
  });

  it.each([
    ['a wrong answer', '41', false],
    ['the right answer', '42', true],
  ])('an agent that rewrites the test, plants a link and a directory where its files go and leaves a daemon gets the shipped verdict (%s)', async (_name, answer, passed) => {
    const victim = join(sandbox, 'victim-dir');
    const outside = treeSnapshot(sandbox, { ignore: ['base'] });
    const { result, runRoot } = await run(`tamper-check:${answer}:${victim}`, SHIPPED);
    expect(result.check?.passed).toBe(passed);
    expect(result.check?.output_tail).toBe(passed ? 'right answer' : `wrong answer: ${answer}`);
    // The link was replaced, never written through; the daemon was gone before the check's files went in.
    expect(treeSnapshot(sandbox, { ignore: ['base'] })).toEqual(outside);
    expect(readFileSync(join(victim, 'helper.sh'), 'utf8')).toBe('root file\n');
    const workspace = join(runRoot, 'workspace');
    expect(readFileSync(join(workspace, 'tests/lib/helper.sh'), 'utf8')).toBe('helper_loaded=yes\n');
    expect(readFileSync(join(workspace, 'expected.txt'), 'utf8')).toBe('42\n');
    expect(readFileSync(join(workspace, 'tests/check.sh'), 'utf8')).toBe(SHIPPED.files![0]!.content);
    expect(await processRunning(Number(readFileSync(join(runRoot, 'tamper-daemon.pid'), 'utf8')))).toBe(false);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('a check past its timeout is killed and failed, the output saying so', async () => {
    const { result } = await run('answer:42', { command: 'echo started; sleep 30', timeoutSeconds: 1 });
    expect(result.check).toMatchObject({ passed: false, exit_code: null, reward: null });
    expect(result.check!.output_tail).toBe('started\n[tcab: the check did not finish within 1s and was killed]');
  });

  it.each([
    ['a number above 1', 'printf 7 > "$TCAB_REWARD_FILE"', '"7"'],
    ['text', 'echo lots > "$TCAB_REWARD_FILE"', '"lots"'],
    ['NaN', 'printf NaN > "$TCAB_REWARD_FILE"', '"NaN"'],
  ])('a reward that is %s is left out (null) with a warning; the verdict stands', async (_name, command, shown) => {
    const { result, events } = await run('answer:42', { command, timeoutSeconds: 60 });
    expect(result.check).toMatchObject({ passed: true, exit_code: 0, reward: null });
    expect(events.filter((e) => e.type === 'warning' && e.code === 'check_reward_invalid').map((e) => (e as { message: string }).message)).toEqual([
      `check: the reward file held ${shown}, not a number in [0, 1]; the reward is left out`,
    ]);
  });

  it('a reward file that is a link to a root file is not read through', async () => {
    const { result, events } = await run('answer:42', { command: `ln -s ${join(sandbox, 'victim')} "$TCAB_REWARD_FILE"`, timeoutSeconds: 60 });
    expect(result.check).toMatchObject({ passed: true, reward: null });
    expect(JSON.stringify(events)).not.toContain('root secret');
  });

  it("sees no credential in its environment, and a key it prints is scrubbed from its output", async () => {
    const { result } = await run('answer:42', { command: 'echo "in env: [$ANTHROPIC_API_KEY]"; echo "printed: sk-ant-fake-check-0123456789"', timeoutSeconds: 60 });
    expect(result.check!.output_tail).toBe('in env: []\nprinted: [tcab:redacted]');
  });

  it('partial rewards are kept as written', async () => {
    const { result } = await run('answer:42', { command: 'printf "0.25\\n" > "$TCAB_REWARD_FILE"; exit 3', timeoutSeconds: 60 });
    expect(result.check).toMatchObject({ passed: false, exit_code: 3, reward: 0.25 });
  });

  it("keeps only the end of a long output (where a test runner's summary is)", async () => {
    const { result } = await run('answer:42', { command: 'i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done', timeoutSeconds: 60 });
    expect(result.check!.output_tail.length).toBeLessThanOrEqual(CHECK_OUTPUT_TAIL_CHARS);
    expect(result.check!.output_tail.endsWith('line 2999')).toBe(true);
  });

  describe("files from git (check.filesFrom): fetched before the agent starts, out of its reach, shipped for the check", () => {
    let repo: string;
    let commit: string;
    beforeAll(() => {
      repo = join(sandbox, 'check-repo');
      mkdirSync(join(repo, 'suite'), { recursive: true });
      for (const file of SHIPPED.files!) {
        mkdirSync(join(repo, 'suite', file.path, '..'), { recursive: true });
        writeFileSync(join(repo, 'suite', file.path), file.content);
      }
      writeFileSync(join(repo, 'README.md'), 'outside the path: never shipped\n');
      const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' }).trim();
      git('init', '--quiet', '--initial-branch=main');
      git('add', '.');
      git('commit', '--quiet', '-m', 'check');
      git('tag', 'v1');
      commit = git('rev-parse', 'HEAD');
    });
    const fromGit = (ref?: string): TestCaseCheck => ({ command: SHIPPED.command, timeoutSeconds: 60, filesFrom: { git: { url: repo, ...(ref ? { ref } : {}), path: 'suite' } } });

    it.each([undefined, 'main', 'v1'])('ref %s: the right answer passes, a wrong one fails, each by the fetched check; the clone is gone before the session', async (ref) => {
      const right = await run('answer:42', fromGit(ref));
      expect(right.result.check).toMatchObject({ passed: true, exit_code: 0, reward: 1, output_tail: 'right answer' });
      const init = right.events.find((e) => e.type === 'system' && e.stage === 'init_test_case' && e.status === 'completed');
      expect(init).toMatchObject({ message: expect.stringContaining(`fetched the check's 3 file(s) from ${repo} at ${commit}`) });
      expect(readdirSync(right.runRoot).filter((n) => n.startsWith('check-files-'))).toEqual([]);
      expect(existsSync(join(right.runRoot, 'workspace', 'README.md'))).toBe(false); // only the path's files
      const wrong = await run('answer:41', fromGit(ref));
      expect(wrong.result.check).toMatchObject({ passed: false, output_tail: 'wrong answer: 41' });
    });

    it('an agent that rewrites the tests still gets the verdict of the fetched check', async () => {
      const { result } = await run(`tamper-check:41:${join(sandbox, 'victim-dir')}`, fromGit('main'));
      expect(result.check).toMatchObject({ passed: false, output_tail: 'wrong answer: 41' });
    });

    it('hostile repository contents: a link among the files is left out (warning), never followed; a path that is a link out of the clone is refused', async () => {
      const hostile = join(sandbox, 'hostile-repo');
      mkdirSync(join(hostile, 'suite'), { recursive: true });
      for (const file of SHIPPED.files!) {
        mkdirSync(join(hostile, 'suite', file.path, '..'), { recursive: true });
        writeFileSync(join(hostile, 'suite', file.path), file.content);
      }
      symlinkSync(join(sandbox, 'victim'), join(hostile, 'suite', 'stolen.txt')); // a root-only file of the machine
      symlinkSync(sandbox, join(hostile, 'out'));
      const git = (...args: string[]) => execFileSync('git', ['-C', hostile, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' }).trim();
      git('init', '--quiet', '--initial-branch=main');
      git('add', '.');
      git('commit', '--quiet', '-m', 'hostile');
      const linked = await run('answer:42', { command: SHIPPED.command, timeoutSeconds: 60, filesFrom: { git: { url: hostile, path: 'suite' } } });
      expect(linked.result.check).toMatchObject({ passed: true, output_tail: 'right answer' });
      expect(linked.events).toContainEqual(expect.objectContaining({ type: 'warning', code: 'test_case_entries_skipped', message: expect.stringContaining('stolen.txt') }));
      expect(existsSync(join(linked.runRoot, 'workspace', 'stolen.txt'))).toBe(false);
      const escaped = await run('answer:42', { command: 'true', timeoutSeconds: 60, filesFrom: { git: { url: hostile, path: 'out' } } });
      expect(escaped.result).toMatchObject({ outcome: 'infrastructure_failed', sessions: [], check: null });
      expect(escaped.result.message).toContain('check.filesFrom.git.path "out" is not a directory in');
    });

    it('a ref the repository does not have fails the run before any session (infrastructure), the check not run', async () => {
      const { result, events } = await run('answer:42', fromGit('no-such-branch'));
      expect(result).toMatchObject({ outcome: 'infrastructure_failed', sessions: [], check: null });
      expect(result.message).toContain('check.filesFrom.git.ref "no-such-branch" is no branch, tag or commit');
      // The failure is init_test_case's, before any session, and its message names the ref.
      expect(events.filter((e) => e.type === 'system').map((e) => e.type === 'system' && `${e.stage}:${e.status}`)).toContain('init_test_case:failed');
      expect(events.find((e) => e.type === 'system' && e.stage === 'init_test_case' && e.status === 'failed')).toMatchObject({ message: expect.stringContaining('"no-such-branch" is no branch, tag or commit') });
      expect(events.some((e) => e.type === 'agent')).toBe(false);
    });
  });

  it('does not run when the run failed before its sessions (check null), and a test case without one has no check', async () => {
    const failed = await run('answer:42', SHIPPED, { harness: failingInstall });
    expect(failed.result.outcome).toBe('infrastructure_failed');
    expect(failed.result.check).toBeNull();
    expect(failed.progresses).toEqual([]); // never said to be checking
    const none = await run('answer:42', undefined);
    expect(none.result).not.toHaveProperty('check');
    expect(none.progresses).toEqual([]);
  });

  it('runs after a failed session too (the agent may have done the work before it failed)', async () => {
    const { result } = await run('exit7', { command: 'test -d tests || echo "judged anyway"', timeoutSeconds: 60 });
    expect(result.outcome).toBe('harness_failed');
    expect(result.check).toMatchObject({ passed: true, output_tail: 'judged anyway' });
  });
});
