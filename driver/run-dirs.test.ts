// A run's install prefix outside its root (TCAB_PREFIX_ROOT, issue 36): on the release store's mount in a driver
// Pod, so a stored release is hard-linked rather than copied. The prefix root is the driver's and not listable; each
// prefix is the run user's; teardown removes it; one a killed driver left is swept once the time in its name passed,
// and nothing else in the prefix root is touched or followed. Root driver, run user uid 1000 (as in CI).
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunDirs, prefixExpiry, prefixName, removeRunDirs, RunDirsError, sweepExpiredPrefixes } from './run-dirs.ts';

const RUN_USER = { uid: 1000, gid: 1000 };
const HOUR = 3600_000;
let sandbox: string;
let base: string;
let prefixRoot: string;

beforeEach(() => {
  expect(process.getuid!()).toBe(0);
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-run-dirs-'));
  chmodSync(sandbox, 0o755);
  base = join(sandbox, 'base');
  prefixRoot = join(sandbox, 'cache', 'prefixes');
});
afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

/** A prefix a killed driver left: the run user's files, a read-only one, a link out of it. */
function leftPrefix(name: string): string {
  const dir = join(prefixRoot, name);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'lib', 'cli.js'), 'x', { mode: 0o444 });
  symlinkSync(join(sandbox, 'victim'), join(dir, 'lib', 'out'));
  chownSync(dir, RUN_USER.uid, RUN_USER.gid);
  return dir;
}

describe('a prefix outside the run root (TCAB_PREFIX_ROOT)', () => {
  it('is made in the prefix root, the run user\'s (0700), the root the driver\'s and not listable (0711); teardown removes both the run root and it', async () => {
    const expiresAt = new Date(Date.now() + 2 * HOUR);
    const dirs = await createRunDirs(base, 'outside-1', RUN_USER, undefined, { root: prefixRoot, expiresAt });
    expect(dirs.prefixRoot).toBe(prefixRoot);
    expect(dirs.prefix.startsWith(`${prefixRoot}/`)).toBe(true);
    const expiry = prefixExpiry(dirs.prefix.slice(prefixRoot.length + 1))!;
    expect(Math.abs(expiry.getTime() - expiresAt.getTime())).toBeLessThan(1000);
    expect(lstatSync(prefixRoot)).toMatchObject({ uid: 0, mode: 0o40711 });
    expect(lstatSync(dirs.prefix)).toMatchObject({ uid: RUN_USER.uid, gid: RUN_USER.gid, mode: 0o40700 });
    expect(existsSync(join(dirs.root, 'prefix'))).toBe(false);
    writeFileSync(join(dirs.prefix, 'installed'), 'x');
    await removeRunDirs(dirs);
    expect(existsSync(dirs.prefix)).toBe(false);
    expect(existsSync(dirs.root)).toBe(false);
    expect(readdirSync(prefixRoot)).toEqual([]);
  });

  it('a later driver sweeps the prefixes whose time has passed, without following their links; live ones and names it did not make stay', async () => {
    writeFileSync(join(sandbox, 'victim'), 'root secret', { mode: 0o600 });
    mkdirSync(prefixRoot, { recursive: true, mode: 0o711 });
    const past = new Date(Date.now() - HOUR);
    const dead = leftPrefix(prefixName(past));
    const live = leftPrefix(prefixName(new Date(Date.now() + HOUR)));
    const foreign = ['notes', '123.not-a-uuid', `${prefixName(past)}x`, `-1.${prefixName(past).split('.')[1]}`].map(leftPrefix);
    // A stray expired name that is a link: unlinked, its target untouched.
    mkdirSync(join(sandbox, 'victim-dir'));
    writeFileSync(join(sandbox, 'victim-dir', 'keep'), 'keep');
    const strayName = prefixName(past);
    symlinkSync(join(sandbox, 'victim-dir'), join(prefixRoot, strayName));
    const dirs = await createRunDirs(base, 'outside-2', RUN_USER, undefined, { root: prefixRoot, expiresAt: new Date(Date.now() + HOUR) });
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(join(prefixRoot, strayName))).toBe(false);
    expect(readFileSync(join(sandbox, 'victim'), 'utf8')).toBe('root secret');
    expect(readFileSync(join(sandbox, 'victim-dir', 'keep'), 'utf8')).toBe('keep');
    for (const kept of [live, ...foreign]) expect(lstatSync(join(kept, 'lib', 'cli.js')).isFile()).toBe(true);
    expect(readdirSync(prefixRoot).sort()).toEqual([live, ...foreign, dirs.prefix].map((p) => p.slice(prefixRoot.length + 1)).sort());
    // Nothing left to sweep now: a second sweep removes nothing.
    expect(await sweepExpiredPrefixes(prefixRoot, new Date())).toEqual([]);
  });

  it('a prefix root another user owns or can write to is refused before any prefix is made', async () => {
    mkdirSync(prefixRoot, { recursive: true });
    chownSync(prefixRoot, RUN_USER.uid, RUN_USER.gid);
    const placement = { root: prefixRoot, expiresAt: new Date(Date.now() + HOUR) };
    await expect(createRunDirs(base, 'outside-3', RUN_USER, undefined, placement)).rejects.toThrow(`${prefixRoot} must be a directory owned by uid 0`);
    chownSync(prefixRoot, 0, 0);
    chmodSync(prefixRoot, 0o777);
    await expect(createRunDirs(base, 'outside-3', RUN_USER, undefined, placement)).rejects.toThrow(RunDirsError);
    rmSync(prefixRoot, { recursive: true });
    symlinkSync(join(sandbox), prefixRoot);
    await expect(createRunDirs(base, 'outside-3', RUN_USER, undefined, placement)).rejects.toThrow(RunDirsError);
    expect(readdirSync(sandbox).sort()).toEqual(['base', 'cache']);
  });

  it('teardown refuses a prefix that is not a prefixName entry directly in its prefix root', async () => {
    const dirs = await createRunDirs(base, 'outside-4', RUN_USER, undefined, { root: prefixRoot, expiresAt: new Date(Date.now() + HOUR) });
    mkdirSync(join(sandbox, 'victim-dir'));
    for (const prefix of [join(sandbox, 'victim-dir'), prefixRoot, join(prefixRoot, '..', 'prefixes2', prefixName(new Date()))]) {
      await expect(removeRunDirs({ ...dirs, prefix })).rejects.toThrow(/refusing to remove/);
    }
    expect(existsSync(join(sandbox, 'victim-dir'))).toBe(true);
    await removeRunDirs(dirs);
  });

  it('prefixExpiry reads back what prefixName wrote, and nothing else', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(0), max: new Date('2200-01-01'), noInvalidDate: true }), fc.uuid(), (at, id) => {
        const expiry = prefixExpiry(prefixName(at, id.toLowerCase()))!;
        expect(expiry.getTime() - at.getTime()).toBeGreaterThanOrEqual(0);
        expect(expiry.getTime() - at.getTime()).toBeLessThan(1000);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (name) => {
        const expiry = prefixExpiry(name);
        if (expiry) expect(name).toMatch(/^\d{1,12}\.[0-9a-f-]{36}$/);
      }),
    );
    for (const name of ['', '.', '..', '1.', '1.x', '1.00000000-0000-0000-0000-00000000000g', '1234567890123.00000000-0000-0000-0000-000000000000', '1.00000000-0000-0000-0000-000000000000/..']) expect(prefixExpiry(name)).toBeUndefined();
  });
});
