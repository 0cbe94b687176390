// `tcab` as a process: the exit status follows from the class of the failure, for every command however nested,
// and the message names what is wrong.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrently } from '../shared/concurrently.ts';

const ROOT = join(import.meta.dirname, '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-main-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tcab(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir, ...env }, timeout: 90_000 }, (_error, _stdout, stderr) =>
      resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe('tcab exit status', () => {
  it('finding 11: a usage error of any command, nested ones included, exits 2 with a message naming it', async () => {
    const cases: [string[], string][] = [
      [['nosuch'], "unknown command 'nosuch'"],
      [['events'], 'Usage: tcab events'],
      [['events', 'nope'], "unknown command 'nope'"],
      [['events', 'follow'], "missing required argument 'run-id'"],
      [['events', 'follow', 'r1', '--bogus'], "unknown option '--bogus'"],
      [['events', 'follow', 'r1', '--type', 'nope'], "argument 'nope' is invalid"],
      [['events', 'tail', 'extra'], 'too many arguments'],
      [['harnesses', 'verify', '--nope'], "unknown option '--nope'"],
      [['harnesses', 'list', '--bogus'], "unknown option '--bogus'"],
      [['models', 'show'], "missing required argument 'id'"],
      [['models', 'import'], "missing required argument 'file'"],
      [['harness-config', 'set', 'claude'], "missing required argument 'limit'"],
      [['run', '--model', 'm', '--prompt', 'p'], "required option '--harness <slug>' not specified"],
      [['run', '--harness', 'claude', '--model', 'm', '--prompt', 'p', '--auth-mode', 'magic'], "argument 'magic' is invalid"],
      [['translate', '--harness'], "option '--harness <slug>' argument missing"],
      // Errors the commands raise: a bad value, an unknown harness, an input file that is not there.
      [['harnesses', 'verify'], 'tcab: verify: give a harness slug or --all'],
      [['harnesses', 'verify', 'nope'], 'tcab: unknown harness "nope" (known: aider,'],
      [['translate', '--harness', 'claude', '/nonexistent/session.jsonl'], "tcab: ENOENT: no such file or directory, open '/nonexistent/session.jsonl'"],
    ];
    const seen: [string, number | null, boolean][] = [];
    await concurrently(cases, 3, async ([args, says]) => {
      const { code, stderr } = await tcab(args);
      seen.push([args.join(' '), code, stderr.includes(says)]);
    });
    expect(seen.sort()).toEqual(cases.map(([args]): [string, number, boolean] => [args.join(' '), 2, true]).sort());
  });

  it('help is not an error: every level exits 0', async () => {
    const codes: (number | null)[] = [];
    await concurrently([['--help'], ['events', '--help'], ['events', 'follow', '--help'], ['harnesses', 'verify', '--help']], 2, async (args) => void codes.push((await tcab(args)).code));
    expect(codes).toEqual([0, 0, 0, 0]);
  });

  it("finding 11: follow '*' is refused at once, naming the argument and the run id grammar (exit 2)", async () => {
    const { code, stderr } = await tcab(['events', 'follow', '*', '--nats', 'nats://127.0.0.1:1']);
    expect(code).toBe(2);
    expect(stderr).toBe('tcab: <run-id>: "*" is not a run id: a run id is 1-200 characters of letters, digits, "-" and "_", starting with a letter or digit\n');
  });

  it('finding 11: a NUL in the prompt is an invalid run spec naming the field (exit 2), before anything is installed', async () => {
    const promptFile = join(dir, 'prompt.txt');
    writeFileSync(promptFile, 'fix it\0 rm -rf /');
    const runRoot = join(dir, 'runs');
    const { code, stderr } = await tcab(['run', '--harness', 'claude', '--model', 'claude-sonnet-4-5', '--prompt-file', promptFile, '--stub'], { TCAB_RUN_ROOT: runRoot });
    expect(code).toBe(2);
    expect(stderr).toBe('tcab: run spec: prompt: must not contain a NUL character (\\0): it cannot be passed to a process\n');
    expect(existsSync(runRoot)).toBe(false);
  });

  it("a run whose test case's check fails exits 7, one whose check passes 0; a bad check flag is a usage error naming it", async () => {
    // The run user (uid 1000) must reach its workspace: a root above it that only root can enter would fail the run.
    const runRoot = mkdtempSync(join(tmpdir(), 'tcab-check-runs-'));
    chmodSync(runRoot, 0o755);
    const run = (check: string[]) => tcab(['run', '--harness', 'gg', '--model', 'stub', '--stub', '--prompt', 'Create hello.txt', '--json', ...check], { TCAB_RUN_ROOT: runRoot });
    const [failed, passed, lone, zero] = await Promise.all([run(['--check', 'exit 1']), run(['--check', 'test -f hello.txt']), run(['--check-timeout', '5']), run(['--check', 'true', '--check-timeout', '0'])]);
    expect([failed.code, passed.code]).toEqual([7, 0]);
    expect([lone.code, lone.stderr]).toEqual([2, 'tcab: --check-timeout: goes with --check\n']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/^tcab: run spec: testCase\.check\.timeoutSeconds: /);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('finding 11: an unreadable input file names its flag (exit 2); a malformed NATS URL is a usage error, not a connection failure', async () => {
    const missing = await tcab(['run', '--harness', 'claude', '--model', 'm', '--prompt-file', join(dir, 'absent.md')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^tcab: --prompt-file: cannot read ".*absent\.md": ENOENT/);
    const badUrl = await tcab(['events', 'tail', '--nats', 'nats://user:sk-fake-canary-pw@127.0.0.1:99999']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toBe('tcab: --nats: "nats://127.0.0.1:99999" is not a NATS server URL (e.g. nats://127.0.0.1:4222)\n');
  });
});
