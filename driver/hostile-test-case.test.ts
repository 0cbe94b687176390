// Hostile test cases, run ids and HOMEs against a root driver that runs the harness as the unprivileged run user
// (uid 1000; tests run as root here and in CI). Each test snapshots a sandbox (every path's type, mode, owner,
// size, mtime, link target and content hash) before and after, and asserts nothing outside the run's own
// directory changed. The harness is the scripted one (test/support/scripted-harness.ts): real processes, no network.
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from './run.ts';
import type { DriverOptions } from './run.ts';
import { MemorySink } from './sinks/sink.ts';
import { resolveRunUser } from './run-user.ts';
import { createRunDirs, removeRunDirs, runDirsFor } from './run-dirs.ts';
import type { RunDirs } from './run-dirs.ts';
import { RunSpec } from '../shared/run.ts';
import type { RunSpecInput } from '../shared/run.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { createScriptedHarness } from '../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { treeSnapshot } from '../test/support/tree-snapshot.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const CANARY = 'sk-ant-fake-canary-hostile-0123456789';
const RUN_UID = 1000;

let sandbox: string;
let base: string;
let harness: ScriptedHarness;
/** Installs the scripted CLI, then (as the run user) plants links in the run's HOME and workspace. */
let planting: ScriptedHarness;

beforeAll(() => {
  expect(process.getuid!()).toBe(0); // the point of this suite: a root driver and an unprivileged harness
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-hostile-'));
  chmodSync(sandbox, 0o755);
  writeFileSync(join(sandbox, 'victim'), 'root secret', { mode: 0o600 });
  mkdirSync(join(sandbox, 'victim-dir'), { mode: 0o700 });
  writeFileSync(join(sandbox, 'victim-dir/secret.txt'), 'root secret in a dir', { mode: 0o600 });
  writeFileSync(join(sandbox, 'hard-victim'), 'hard-linked root secret', { mode: 0o600 });
  base = join(sandbox, 'base');
  mkdirSync(join(base, 'runs'), { recursive: true, mode: 0o755 });
  chmodSync(base, 0o755);
  mkdirSync(join(base, `npm-cache-${RUN_UID}`), { mode: 0o700 });
  chownSync(join(base, `npm-cache-${RUN_UID}`), RUN_UID, RUN_UID); // as the first run leaves it

  // Links to root-owned files and directories outside, and a relative link inside.
  const links = join(sandbox, 'tc-links');
  mkdirSync(join(links, 'sub'), { recursive: true });
  writeFileSync(join(links, 'sub/file.txt'), 'plain');
  symlinkSync(join(sandbox, 'victim'), join(links, 'link'));
  symlinkSync(join(sandbox, 'victim-dir'), join(links, 'linkdir'));
  symlinkSync('sub/file.txt', join(links, 'relative-link'));
  // Other kinds of entries: a hard link to a root-owned file outside, a FIFO, modes to keep.
  const kinds = join(sandbox, 'tc-kinds');
  mkdirSync(join(kinds, 'sub'), { recursive: true });
  mkdirSync(join(kinds, 'empty'));
  writeFileSync(join(kinds, 'sub/file.txt'), 'plain');
  writeFileSync(join(kinds, 'sub/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  linkSync(join(sandbox, 'hard-victim'), join(kinds, 'hard'));
  execFileSync('mkfifo', [join(kinds, 'fifo')]);
  writeFileSync(join(sandbox, 'a-file'), 'not a directory');

  harness = createScriptedHarness();
  planting = createScriptedHarness();
  const toml = join(planting.root, 'scripted/harness.toml');
  const cli = join(planting.root, 'scripted/scripted-cli.sh');
  const plant = [
    `mkdir -p {prefix}/bin && cp ${cli} {prefix}/bin/scripted`,
    `mkdir -p "$HOME/.scripted" && ln -s ${join(sandbox, 'victim')} "$HOME/.scripted/credentials.json"`,
    `ln -s ${join(sandbox, 'victim-dir')} "$HOME/skills"`,
    `ln -s ${join(sandbox, 'victim-dir')} "$HOME/../workspace/src"`,
  ].join(' && ');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^command = .*$/m, `command = ["sh", "-c", ${JSON.stringify(plant)}]`));
});

afterAll(() => {
  rmSync(sandbox, { recursive: true, force: true });
  harness.dispose();
  planting.dispose();
});

/** Everything in the sandbox except the run's own directory (and the parent's mtime, which its creation changes). */
const outsideOf = (runId: string) => treeSnapshot(sandbox, { ignore: [`base/runs/${runId}`], ignoreTimes: ['base/runs'] });

let counter = 0;
async function run(spec: Partial<RunSpecInput>, options: Partial<DriverOptions> & { runId?: string } = {}) {
  const sink = new MemorySink();
  const runId = options.runId ?? `hostile-${++counter}`;
  const env = { TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: CANARY };
  const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'workspace', ...spec }), {
    runId,
    env,
    sinks: [sink],
    user: resolveRunUser(env, process.getuid!()),
    credentialSource: { kind: 'home', home: join(sandbox, 'no-home') },
    harnessesRoot: harness.root,
    ...options,
  });
  return { result, events: sink.events.map((e) => e.event), runRoot: join(base, 'runs', runId), runId };
}

const stages = (events: { type: string; stage?: string; status?: string }[]) => events.filter((e) => e.type === 'system').map((e) => `${e.stage}:${e.status}`);

describe('a hostile test case against a root driver', () => {
  it('finding 1: symlinks in a test case are recreated as links, never followed; their root-owned targets keep owner, mode and content', async () => {
    const before = outsideOf('hostile-links');
    const { result, runRoot } = await run({ testCase: { source: { local: { path: join(sandbox, 'tc-links') } } } }, { runId: 'hostile-links', keep: true });
    expect(outsideOf('hostile-links')).toEqual(before);
    expect(result.outcome).toBe('succeeded');
    const workspace = join(runRoot, 'workspace');
    expect(readlinkSync(join(workspace, 'link'))).toBe(join(sandbox, 'victim'));
    expect(readlinkSync(join(workspace, 'linkdir'))).toBe(join(sandbox, 'victim-dir'));
    expect(readlinkSync(join(workspace, 'relative-link'))).toBe('sub/file.txt');
    for (const link of ['link', 'linkdir', 'relative-link']) expect(lstatSync(join(workspace, link)).uid).toBe(RUN_UID);
    expect(readFileSync(join(runRoot, 'workspace-listing'), 'utf8').trim().split('\n').sort()).toEqual(['link', 'linkdir', 'relative-link', 'sub']);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('finding 1: a hard link becomes an independent copy, a FIFO is skipped and reported, everything created belongs to the run user', async () => {
    const before = outsideOf('hostile-kinds');
    const { result, events, runRoot } = await run({ testCase: { source: { local: { path: join(sandbox, 'tc-kinds') } } } }, { runId: 'hostile-kinds', keep: true });
    expect(outsideOf('hostile-kinds')).toEqual(before);
    expect(result.outcome).toBe('succeeded');
    const workspace = join(runRoot, 'workspace');
    const hard = lstatSync(join(workspace, 'hard'));
    expect(hard.isFile() && hard.nlink === 1 && hard.uid === RUN_UID).toBe(true);
    expect(hard.ino).not.toBe(lstatSync(join(sandbox, 'hard-victim')).ino);
    expect(hard.mode & 0o777).toBe(0o600);
    expect(existsSync(join(workspace, 'fifo'))).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ type: 'warning', code: 'test_case_entries_skipped', message: '1 test case entry was not copied: fifo (a FIFO)' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'system', stage: 'init_test_case', status: 'completed', message: `copied ${join(sandbox, 'tc-kinds')}; skipped 1 entry` }));
    for (const path of ['', 'sub', 'sub/file.txt', 'sub/run.sh', 'empty']) {
      const info = lstatSync(join(workspace, path));
      expect({ path, uid: info.uid, gid: info.gid }).toEqual({ path, uid: RUN_UID, gid: RUN_UID });
    }
    expect(lstatSync(join(workspace, 'sub/run.sh')).mode & 0o777).toBe(0o755);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('finding 1: credentials and home files never follow a link the harness install planted in HOME; inline files never follow one in the workspace', async () => {
    const home = join(sandbox, 'user-home');
    mkdirSync(join(home, '.scripted'), { recursive: true });
    writeFileSync(join(home, '.scripted/credentials.json'), JSON.stringify({ refresh_token: 'oauth-fake-refresh-token-hostile-0123' }));
    const before = () => treeSnapshot(sandbox, { ignore: ['base/runs', 'user-home'] });
    const start = before();

    // Credentials land as a fresh 0600 file in place of the planted link; the link's target is untouched.
    const ok = await run({ prompt: 'plain' }, { runId: 'hostile-home', harnessesRoot: planting.root, credentialSource: { kind: 'home', home }, homeFiles: { 'notes/a.md': 'note' }, keep: true });
    expect(ok.result).toMatchObject({ outcome: 'succeeded', auth_mode: 'subscription' });
    const copied = lstatSync(join(ok.runRoot, 'home/.scripted/credentials.json'));
    expect(copied.isFile() && copied.uid === RUN_UID && (copied.mode & 0o777) === 0o600).toBe(true);
    expect(lstatSync(join(ok.runRoot, 'home/notes/a.md')).uid).toBe(RUN_UID);

    // A home file under the planted directory link is refused: the run fails instead of writing into victim-dir.
    const skills = await run({ prompt: 'plain' }, { runId: 'hostile-skills', harnessesRoot: planting.root, homeFiles: { 'skills/demo/SKILL.md': 'skill' } });
    expect(skills.result.outcome).toBe('infrastructure_failed');
    expect(skills.result.message).toMatch(/skills: it is a symlink or not a directory/);

    // An inline test case file under a link planted in the workspace is refused the same way.
    const inline = await run({ testCase: { source: { files: [{ path: 'src/a.txt', content: 'x' }] } } }, { runId: 'hostile-inline', harnessesRoot: planting.root });
    expect(inline.result.outcome).toBe('infrastructure_failed');
    expect(inline.result.message).toMatch(/cannot write test case file src\/a\.txt: .*src: it is a symlink or not a directory/);

    rmSync(ok.runRoot, { recursive: true, force: true });
    expect(existsSync(skills.runRoot) || existsSync(inline.runRoot)).toBe(false);
    expect(before()).toEqual(start);
  });
});

describe('hostile run ids', () => {
  it('finding 2: a run id with ".." or an empty one is refused before anything is created, and nothing outside changes', async () => {
    const before = treeSnapshot(sandbox);
    for (const runId of ['', '../../victim', '..', 'a/../../victim-dir', 'x y', 'x.y']) {
      const sink = new MemorySink();
      await expect(run({}, { runId, sinks: [sink] })).rejects.toThrow(InvalidInputError);
      expect(sink.events).toEqual([]);
      await expect(createRunDirs(base, runId, { uid: RUN_UID, gid: RUN_UID })).rejects.toThrow(InvalidInputError);
      expect(() => runDirsFor(base, runId)).toThrow(/is not a run id/);
    }
    expect(treeSnapshot(sandbox)).toEqual(before);
  });

  it('finding 2: teardown refuses a run root that does not resolve to <base>/runs/<id>', async () => {
    const runs = join(base, 'runs');
    symlinkSync(join(sandbox, 'victim-dir'), join(runs, 'linked'));
    try {
      const before = treeSnapshot(sandbox, { ignore: ['base/runs/linked'] });
      const forged = (root: string): RunDirs => ({ ...runDirsFor(base, 'placeholder'), root });
      // What '' and '../../victim' used to name, and a run root swapped for a link to a directory outside.
      for (const root of [runs, join(runs, '../../victim-dir'), join(runs, 'linked'), join(sandbox, 'victim-dir')]) {
        await expect(removeRunDirs(forged(root))).rejects.toThrow(/refusing to remove/);
      }
      expect(treeSnapshot(sandbox, { ignore: ['base/runs/linked'] })).toEqual(before);
    } finally {
      rmSync(join(runs, 'linked'));
    }
  });

  it('finding 2: a run base another user owns, or whose runs/ is a link, is refused before any run directory is made', async () => {
    // A /tmp/tcab squatted by a local user before the root driver's first run: runs/ points at a root directory.
    const squatted = join(sandbox, 'squatted');
    mkdirSync(squatted);
    symlinkSync(join(sandbox, 'victim-dir'), join(squatted, 'runs'));
    chownSync(squatted, RUN_UID, RUN_UID);
    try {
      const before = treeSnapshot(sandbox, { ignore: ['squatted'] });
      await expect(createRunDirs(squatted, 'hostile-squat', { uid: RUN_UID, gid: RUN_UID })).rejects.toThrow(`${squatted} must be a directory owned by uid 0`);
      chownSync(squatted, 0, 0);
      await expect(createRunDirs(squatted, 'hostile-squat', { uid: RUN_UID, gid: RUN_UID })).rejects.toThrow(`${join(squatted, 'runs')} must be a directory owned by uid 0`);
      expect(treeSnapshot(sandbox, { ignore: ['squatted'] })).toEqual(before);
    } finally {
      rmSync(squatted, { recursive: true, force: true });
    }
  });

  it("finding 2: a run id taken by another run is refused, and the other run's directory survives", async () => {
    const first = await run({ prompt: 'plain' }, { runId: 'hostile-taken', keep: true });
    expect(first.result.outcome).toBe('succeeded');
    writeFileSync(join(first.runRoot, 'workspace/result.txt'), 'keep me');
    const before = treeSnapshot(sandbox);
    const second = await run({ prompt: 'plain' }, { runId: 'hostile-taken' });
    expect(second.result.outcome).toBe('infrastructure_failed');
    expect(second.result.message).toContain('run id "hostile-taken" is taken by another run');
    expect(treeSnapshot(sandbox)).toEqual(before);
    rmSync(first.runRoot, { recursive: true, force: true });
  });

  it('finding 2: tcab run --run-id and the driver’s TCAB_RUN_ID refuse an id outside the grammar with exit 2, naming where it came from', async () => {
    const before = treeSnapshot(sandbox);
    const env = { ...process.env, TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: CANARY };
    for (const runId of ['', '../../victim']) {
      const cli = await exec(process.execPath, [join(ROOT, 'bin/tcab.js'), 'run', '--harness', 'claude', '--model', 'claude-sonnet-4-5', '--prompt', 'x', '--stub', '--run-id', runId], { env }).catch((e: { code: number; stderr: string }) => e);
      expect({ code: (cli as { code: number }).code, named: cli.stderr.includes('--run-id: ') }).toEqual({ code: 2, named: true });
      const driver = await exec(process.execPath, [join(ROOT, 'bin/tcab-driver.js')], { env: { ...env, TCAB_RUN_ID: runId, TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'x' }) } }).catch((e: { code: number; stderr: string }) => e);
      expect({ code: (driver as { code: number }).code, named: driver.stderr.includes('TCAB_RUN_ID: ') }).toEqual({ code: 2, named: true });
    }
    expect(treeSnapshot(sandbox)).toEqual(before);
  });
});

describe('a test case path that is not a directory', () => {
  it('finding 11: --test-case pointing at a file fails before the install', async () => {
    const before = treeSnapshot(sandbox);
    const env = { ...process.env, TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: CANARY };
    for (const path of [join(sandbox, 'a-file'), join(sandbox, 'missing')]) {
      const cli = await exec(process.execPath, [join(ROOT, 'bin/tcab.js'), 'run', '--harness', 'claude', '--model', 'claude-sonnet-4-5', '--prompt', 'x', '--stub', '--test-case', path], { env }).catch((e: { code: number; stderr: string }) => e);
      expect((cli as { code: number }).code).toBe(2);
      expect(cli.stderr).toContain(`--test-case: ${path} ${path.endsWith('missing') ? 'does not exist' : 'is not a directory'}`);
    }
    expect(treeSnapshot(sandbox)).toEqual(before);

    // The driver (a spec's testCase.source.local.path): an infrastructure failure before install_harness.
    const { result, events } = await run({ testCase: { source: { local: { path: join(sandbox, 'a-file') } } } }, { runId: 'hostile-file-tc' });
    expect(result.outcome).toBe('infrastructure_failed');
    expect(result.message).toBe(`test case: ${join(sandbox, 'a-file')} is not a directory (a test case is a directory that is copied into the workspace)`);
    expect(stages(events)).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', code: 'init_test_case_failed' }));
    expect(treeSnapshot(sandbox)).toEqual(before);
  });
});
