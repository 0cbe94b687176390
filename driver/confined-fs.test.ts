import { spawn } from 'node:child_process';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfinementError, MAX_DEPTH, confinedSegments, onlyDriverWrites, removeConfinedTree, restoreConfinedFile, writeConfinedFile } from './confined-fs.ts';
import { treeSnapshot } from '../test/support/tree-snapshot.ts';
import { pollUntil } from '../test/support/poll.ts';

let sandbox: string;
let root: string;
let outside: string;
beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-confined-'));
  root = join(sandbox, 'root');
  outside = join(sandbox, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'victim'), 'victim content', { mode: 0o600 });
});
afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

const outsideSnapshot = () => treeSnapshot(outside);

describe('writeConfinedFile', () => {
  it('makes missing directories and writes the file with its mode', async () => {
    await writeConfinedFile(root, 'a/b/c.txt', 'hello', { mode: 0o640, dirMode: 0o750, owner: {} });
    expect(readFileSync(join(root, 'a/b/c.txt'), 'utf8')).toBe('hello');
    expect(lstatSync(join(root, 'a/b/c.txt')).mode & 0o777).toBe(0o640);
    expect(lstatSync(join(root, 'a/b')).mode & 0o777).toBe(0o750);
  });

  it('replaces a planted symlink in the last component: its target keeps its content', async () => {
    const before = outsideSnapshot();
    symlinkSync(join(outside, 'victim'), join(root, 'settings.json'));
    await writeConfinedFile(root, 'settings.json', 'ours', { owner: {} });
    expect(lstatSync(join(root, 'settings.json')).isFile()).toBe(true);
    expect(readFileSync(join(root, 'settings.json'), 'utf8')).toBe('ours');
    expect(outsideSnapshot()).toEqual(before);
  });

  it('replaces a planted hard link instead of writing through it', async () => {
    linkSync(join(outside, 'victim'), join(root, 'hard.json'));
    await writeConfinedFile(root, 'hard.json', 'ours', { owner: {} });
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('victim content');
    expect(lstatSync(join(root, 'hard.json')).nlink).toBe(1);
  });

  it('refuses a symlinked parent directory and writes nothing through it', async () => {
    const before = outsideSnapshot();
    symlinkSync(outside, join(root, '.claude'));
    await expect(writeConfinedFile(root, '.claude/settings.json', 'x', { owner: {} })).rejects.toThrow(ConfinementError);
    expect(outsideSnapshot()).toEqual(before);
  });

  it('refuses a root that is itself a symlink, and paths that leave the root', async () => {
    symlinkSync(outside, join(sandbox, 'linked-root'));
    await expect(writeConfinedFile(join(sandbox, 'linked-root'), 'x', 'x', { owner: {} })).rejects.toThrow(ConfinementError);
    for (const path of ['../x', 'a/../../x', '/etc/x', '', '.']) expect(() => confinedSegments(path)).toThrow(ConfinementError);
    expect(readdirSync(outside)).toEqual(['victim']);
  });
});

const FLIPPER = `
const fs = require('fs');
const [dir, victim] = process.argv.slice(1);
process.chdir(dir);
const hold = () => { const end = process.hrtime.bigint() + 200000n; while (process.hrtime.bigint() < end); };
const attempt = (f) => { try { f(); } catch {} };
for (;;) {
  attempt(() => fs.renameSync('d', 'd.real'));
  attempt(() => fs.symlinkSync(victim, 'd'));
  hold();
  attempt(() => fs.unlinkSync('d'));
  attempt(() => fs.renameSync('d.real', 'd'));
  hold();
}`;

describe('restoreConfinedFile (a check file shipped in over what the agent left)', () => {
  it.each([
    ['a symlink to a directory outside where a directory goes', () => symlinkSync(outside, join(root, 'tests'))],
    ['a file where a directory goes', () => writeFileSync(join(root, 'tests'), 'not a dir')],
    ['a directory tree where the file goes', () => mkdirSync(join(root, 'tests/check.sh/deep'), { recursive: true })],
    ['a symlink to a file outside where the file goes', () => (mkdirSync(join(root, 'tests')), symlinkSync(join(outside, 'victim'), join(root, 'tests/check.sh')))],
    ['a link inside a directory tree where the file goes', () => (mkdirSync(join(root, 'tests/check.sh'), { recursive: true }), symlinkSync(outside, join(root, 'tests/check.sh/out')))],
  ])('replaces %s; nothing outside changes', async (_name, plant) => {
    plant();
    const before = outsideSnapshot();
    await restoreConfinedFile(root, 'tests/check.sh', 'shipped', { mode: 0o644, dirMode: 0o755, owner: {} });
    expect(readFileSync(join(root, 'tests/check.sh'), 'utf8')).toBe('shipped');
    expect(lstatSync(join(root, 'tests')).isDirectory()).toBe(true);
    expect(lstatSync(join(root, 'tests/check.sh')).mode & 0o777).toBe(0o644);
    expect(outsideSnapshot()).toEqual(before);
  });

  it('still refuses a root that is a symlink and paths that leave it', async () => {
    symlinkSync(outside, join(sandbox, 'linked-root'));
    await expect(restoreConfinedFile(join(sandbox, 'linked-root'), 'x', 'y', { owner: {} })).rejects.toThrow(ConfinementError);
    await expect(restoreConfinedFile(root, '../outside/victim', 'y', { owner: {} })).rejects.toThrow(/not a path inside the directory/);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('victim content');
  });
});

describe('a directory swapped for a symlink while the driver writes', () => {
  it('finding 1: a concurrent swap never redirects a write outside: each write lands inside or is refused', async () => {
    mkdirSync(join(root, 'd'));
    const victimDir = join(outside, 'victim-dir');
    mkdirSync(victimDir);
    const before = outsideSnapshot();
    // Another process flips root/d between the real directory and a symlink to victim-dir (each state held ~0.2 ms);
    // a path-based mkdir + writeFile lands about a third of 300 writes in victim-dir against it.
    const swapper = spawn(process.execPath, ['-e', FLIPPER, root, victimDir], { stdio: 'ignore' });
    const outcomes = new Map<string, number>();
    try {
      // Writes start once the flipping has (a d.real seen: the swap is under way), within 10 s.
      await pollUntil('the swapper to start (a d.real)', () => existsSync(join(root, 'd.real')), { timeoutMs: 10_000, intervalMs: 0 });
      for (let i = 0; i < 300; i++) {
        const outcome = await writeConfinedFile(root, `d/file-${i}`, 'x', { owner: {} }).then(
          () => 'written',
          (error: unknown) => (error instanceof ConfinementError ? 'refused' : ((error as NodeJS.ErrnoException).code ?? 'other')),
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    expect([...outcomes.keys()].every((o) => ['written', 'refused', 'ENOENT'].includes(o))).toBe(true);
    expect(outsideSnapshot()).toEqual(before);
  });
});

describe('removeConfinedTree', () => {
  it('removes links, never what they point to, at any depth', async () => {
    const before = outsideSnapshot();
    mkdirSync(join(root, 'a/b'), { recursive: true });
    writeFileSync(join(root, 'a/b/file'), 'x');
    symlinkSync(outside, join(root, 'a/dir-link'));
    symlinkSync(join(outside, 'victim'), join(root, 'a/b/file-link'));
    linkSync(join(outside, 'victim'), join(root, 'hard'));
    expect(await removeConfinedTree(root)).toEqual([]);
    expect(existsSync(root)).toBe(false);
    // The hard link's count went back down; nothing else outside changed.
    expect(outsideSnapshot()).toEqual(before);
  });

  it(`leaves directories nested deeper than ${MAX_DEPTH} levels and names them`, async () => {
    const deep = join(root, ...Array.from({ length: MAX_DEPTH + 2 }, () => 'd'));
    mkdirSync(deep, { recursive: true });
    const left = await removeConfinedTree(root);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(new RegExp(`nested deeper than ${MAX_DEPTH} levels`));
    expect(existsSync(root)).toBe(true);
  });
});

describe('onlyDriverWrites', () => {
  it.each([
    ['the driver\'s, 0755', { uid: 0, mode: 0o40755 }, 0, true],
    ['the driver\'s, 0700', { uid: 0, mode: 0o40700 }, 0, true],
    ['the driver\'s, sticky 1755', { uid: 0, mode: 0o41755 }, 0, true],
    ['group-writable', { uid: 0, mode: 0o40775 }, 0, false],
    ['other-writable', { uid: 0, mode: 0o40757 }, 0, false],
    ['a /tmp-like 1777', { uid: 0, mode: 0o41777 }, 0, false],
    ['another user\'s', { uid: 1000, mode: 0o40755 }, 0, false],
    ['a non-root driver\'s own', { uid: 1000, mode: 0o40700 }, 1000, true],
    ['root\'s, to a non-root driver', { uid: 0, mode: 0o40755 }, 1000, false],
    ['no uid known (not POSIX): the mode alone', { uid: 4242, mode: 0o40755 }, undefined, true],
  ])('%s', (_, info, driverUid, expected) => {
    expect(onlyDriverWrites(info, driverUid)).toBe(expected);
  });
});
