// The release store (driver/stages/release-store.ts, issue 36): a root driver and a run user (uid 1000; tests run
// as root here and in CI), a real npm installing from a registry on 127.0.0.1, and a store attacked by the agent of
// a run and by whoever else could write it.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from './run.ts';
import type { DriverOptions } from './run.ts';
import { resolveRunUser } from './run-user.ts';
import { MemorySink } from './sinks/sink.ts';
import { RunSpec } from '../shared/run.ts';
import type { RunSpecInput } from '../shared/run.ts';
import type { HarnessEvent } from '../shared/events.ts';
import type { ReleaseId } from '../shared/release-store.ts';
import { ReleaseCorrupt, StoreUnusable, discardRelease, pruneReleases, releaseKey, restoreRelease, saveRelease } from './stages/release-store.ts';
import { SCRIPT, createScriptedHarness } from '../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { startScriptedRegistry } from '../test/support/scripted-registry.ts';
import type { ScriptedRegistry } from '../test/support/scripted-registry.ts';

const RUN_UID = 1000;
const RUN_USER = { uid: RUN_UID, gid: RUN_UID };
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const RELEASE: ReleaseId = { slug: 'scripted', package: 'scripted-cli', version: '1.0.0', integrity: 'sha512-AAAA', command: ['npm', 'install', 'scripted-cli@latest'] };

let base: string;
beforeAll(() => {
  expect(process.getuid!()).toBe(0); // the point of this suite: a root driver and an unprivileged harness
  base = mkdtempSync(join(tmpdir(), 'tcab-release-store-'));
  chmodSync(base, 0o711);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

let counter = 0;
/** A prefix as an install leaves it (the run user's): a bin symlink, an executable, a nested package, an empty dir. */
function installedPrefix(): string {
  const prefix = join(base, `prefix-${++counter}`);
  mkdirSync(join(prefix, 'lib/node_modules/pkg/node_modules/native'), { recursive: true });
  mkdirSync(join(prefix, 'bin'));
  mkdirSync(join(prefix, 'empty'));
  writeFileSync(join(prefix, 'lib/node_modules/pkg/cli.sh'), '#!/bin/sh\necho 1.0.0\n', { mode: 0o755 });
  writeFileSync(join(prefix, 'lib/node_modules/pkg/package.json'), '{"name":"pkg"}', { mode: 0o644 });
  writeFileSync(join(prefix, 'lib/node_modules/pkg/node_modules/native/blob'), Buffer.alloc(9 << 20, 7), { mode: 0o755 });
  symlinkSync('../lib/node_modules/pkg/cli.sh', join(prefix, 'bin/pkg'));
  // A second name of the binary, as Claude Code's postinstall makes (bin/claude.exe and the platform package's).
  linkSync(join(prefix, 'lib/node_modules/pkg/node_modules/native/blob'), join(prefix, 'lib/node_modules/pkg/blob.exe'));
  execFileSync('chown', ['-R', `${RUN_UID}:${RUN_UID}`, prefix]);
  return prefix;
}

function emptyPrefix(): string {
  const prefix = join(base, `restored-${++counter}`);
  mkdirSync(prefix, { mode: 0o700 });
  chownSync(prefix, RUN_UID, RUN_UID);
  return prefix;
}

/** Every entry under `root`: type, mode, owner and a digest of a file's bytes or a link's target. */
function listing(root: string, rel = ''): string[] {
  return readdirSync(join(root, rel)).sort().flatMap((name) => {
    const path = rel ? `${rel}/${name}` : name;
    const info = lstatSync(join(root, path));
    const who = `${(info.mode & 0o7777).toString(8)} ${info.uid}:${info.gid}`;
    if (info.isDirectory()) return [`d ${path} ${who}`, ...listing(root, path)];
    if (info.isSymbolicLink()) return [`l ${path} -> ${readlinkSync(join(root, path))} ${info.uid}:${info.gid}`];
    return [`f ${path} ${who} ${sha256(readFileSync(join(root, path)))}`];
  });
}

/** A listing line of a file as the store holds it (and links it into a run): root's, without write bits. */
const asStored = (line: string) => line.replace(/^f (\S+) (\d+) \d+:\d+/, (_, path: string, mode: string) => `f ${path} ${(parseInt(mode, 8) & 0o555).toString(8)} 0:0`);

/** As the run user: a shell command, its exit code. */
const asRunUser = (command: string) => spawnSync('sh', ['-c', command], { uid: RUN_UID, gid: RUN_UID, encoding: 'utf8' }).status;

describe('the release store: save and restore', () => {
  it('restores the installed tree exactly (files, modes, symlinks, empty dirs), owned by the run user, as an install left it', async () => {
    const store = join(base, 'store-exact');
    const prefix = installedPrefix();
    expect(await saveRelease(store, RELEASE, prefix)).toEqual({ stored: true, files: 3, bytes: (9 << 20) + 21 + 14 });
    // A second save of the same release keeps the first.
    expect(await saveRelease(store, RELEASE, installedPrefix())).toEqual({ stored: false, reason: 'present' });
    // A root driver and another run user: the store's read-only inodes are linked in (the run user's: the dirs and
    // symlinks it may change, as after an install).
    const into = emptyPrefix();
    expect(await restoreRelease(store, RELEASE, into, RUN_USER)).toEqual({ restored: true, files: 3, bytes: (9 << 20) + 35, linked: true });
    const entry = join(store, releaseKey(RELEASE));
    expect(listing(into)).toEqual(listing(prefix).map(asStored));
    const blob = 'lib/node_modules/pkg/node_modules/native/blob';
    expect(lstatSync(join(into, blob)).ino).toBe(lstatSync(join(entry, 'tree', blob)).ino);
    // The driver is the run user (a workstation without root): copies, its own, modes as installed.
    const copied = emptyPrefix();
    chownSync(copied, 0, 0);
    expect(await restoreRelease(store, RELEASE, copied, {})).toEqual({ restored: true, files: 3, bytes: (9 << 20) + 35, linked: false });
    expect(listing(copied)).toEqual(listing(prefix).map((line) => line.replace(/ 1000:1000/, ' 0:0')));
    expect(lstatSync(join(copied, blob)).ino).not.toBe(lstatSync(join(entry, 'tree', blob)).ino);
    // Another release (any field of its id) is another entry: absent.
    for (const other of [{ ...RELEASE, version: '1.0.1' }, { ...RELEASE, integrity: 'sha512-BBBB' }, { ...RELEASE, command: ['npm', 'i'] }, { ...RELEASE, platform: { package: 'n', integrity: 'sha512-C' } }]) {
      expect(releaseKey(other)).not.toBe(releaseKey(RELEASE));
      expect(await restoreRelease(store, other, emptyPrefix(), RUN_USER)).toEqual({ restored: false });
    }
    // The store's copy is the driver's and read-only: files 0444/0555, directories 0555, nothing of the run user's.
    for (const line of listing(entry)) expect(line, line).toMatch(/^(d .* 555 0:0|f .* (444|555) 0:0 \S+|l .*)$/);
    expect(readdirSync(store)).toEqual([releaseKey(RELEASE)]); // no staging left behind
  });

  it('a root driver storing another run user\'s install: the installed files become the store\'s (root\'s, read-only, the same inodes), nothing copied', async () => {
    const store = join(base, 'store-adopt');
    const prefix = installedPrefix();
    const before = listing(prefix);
    expect(await saveRelease(store, RELEASE, prefix, RUN_USER)).toEqual({ stored: true, files: 3, bytes: (9 << 20) + 35 });
    const blob = 'lib/node_modules/pkg/node_modules/native/blob';
    const entry = join(store, releaseKey(RELEASE));
    expect(lstatSync(join(prefix, blob)).ino).toBe(lstatSync(join(entry, 'tree', blob)).ino);
    expect(listing(prefix)).toEqual(before.map(asStored));
    expect(asRunUser(`printf x >> '${join(prefix, blob)}'`)).not.toBe(0);
    expect(asRunUser(`chmod u+w '${join(prefix, 'lib/node_modules/pkg/cli.sh')}'`)).not.toBe(0);
    const into = emptyPrefix();
    expect(await restoreRelease(store, RELEASE, into, RUN_USER)).toMatchObject({ restored: true, files: 3 });
    expect(listing(into)).toEqual(before.map(asStored));
  });

  it('a store on another mount than the prefix (a Pod\'s hostPath and its emptyDir): linking is refused (EXDEV), files are copied, checked', async () => {
    const other = mkdtempSync('/dev/shm/tcab-release-store-');
    try {
      const store = join(other, 'store');
      const prefix = installedPrefix();
      // Another mount: the run user's files cannot be linked in, so they are copied (and stay the run user's).
      const before = listing(prefix);
      await saveRelease(store, RELEASE, prefix, RUN_USER);
      expect(listing(prefix)).toEqual(before);
      const into = emptyPrefix();
      expect(await restoreRelease(store, RELEASE, into, RUN_USER)).toEqual({ restored: true, files: 3, bytes: (9 << 20) + 35, linked: false });
      expect(listing(into)).toEqual(listing(prefix));
      const blob = 'lib/node_modules/pkg/node_modules/native/blob';
      expect(lstatSync(join(into, blob)).ino).toBe(lstatSync(join(into, 'lib/node_modules/pkg/blob.exe')).ino); // its second name, linked in the prefix
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('the run user cannot change the store: append, chmod, remove, rename or plant all refused', async () => {
    const store = join(base, 'store-run-user');
    await saveRelease(store, RELEASE, installedPrefix());
    const entry = join(store, releaseKey(RELEASE));
    const file = join(entry, 'tree/lib/node_modules/pkg/cli.sh');
    const before = listing(store);
    expect(asRunUser(`printf x >> '${file}'`)).not.toBe(0);
    expect(asRunUser(`chmod u+w '${file}'`)).not.toBe(0);
    expect(asRunUser(`rm -f '${file}' && test ! -e '${file}'`)).not.toBe(0);
    expect(asRunUser(`mv '${entry}' '${store}/moved'`)).not.toBe(0);
    expect(asRunUser(`mkdir '${store}/planted'`)).not.toBe(0);
    expect(asRunUser(`ln '${file}' /tmp/tcab-hardlink-${counter}`)).not.toBe(0); // protected_hardlinks: not its file
    expect(listing(store)).toEqual(before);
  });

  // Whoever can write the store (its owner) changes an entry: each change is caught before the run executes any of it.
  const tampering: [string, (entry: string) => void, RegExp][] = [
    ['a byte of a file changed (same size)', (e) => {
      const blob = join(e, 'tree/lib/node_modules/pkg/node_modules/native/blob');
      chmodSync(blob, 0o755);
      const bytes = readFileSync(blob);
      bytes[bytes.length - 1] = 8;
      writeFileSync(blob, bytes);
      chmodSync(blob, 0o555);
    }, /pkg\/blob.exe does not match its SHA-256/],
    ['a file grown', (e) => writeFileSync(join(e, 'tree/lib/node_modules/pkg/cli.sh'), 'echo 6.6.6\n', { flag: 'a' }), /cli.sh is \d+ bytes in the store, its manifest says 21/],
    ['a file swapped for a symlink', (e) => {
      unlinkSync(join(e, 'tree/lib/node_modules/pkg/cli.sh'));
      symlinkSync('/bin/sh', join(e, 'tree/lib/node_modules/pkg/cli.sh'));
    }, /cli.sh is missing from the store or not a regular file/],
    ['a file made the run user\'s', (e) => chownSync(join(e, 'tree/lib/node_modules/pkg/cli.sh'), RUN_UID, RUN_UID), /owned by uid 1000 .* only the driver/],
    ['a directory made group-writable', (e) => chmodSync(join(e, 'tree/lib'), 0o775), /tree\/lib is owned by uid 0 with mode 775/],
    ['the manifest not JSON', (e) => writeFileSync(join(e, 'manifest.json'), '{'), /manifest.json is not JSON/],
    ['the manifest naming a path outside the prefix', (e) => {
      const manifest = JSON.parse(readFileSync(join(e, 'manifest.json'), 'utf8'));
      manifest.entries.push({ kind: 'symlink', path: '../../escape', target: '/etc/passwd' });
      writeFileSync(join(e, 'manifest.json'), JSON.stringify(manifest));
    }, /not a store manifest: entries\.\d+\.path: must be a relative path inside the prefix/],
    ['the manifest of another release', (e) => {
      const manifest = JSON.parse(readFileSync(join(e, 'manifest.json'), 'utf8'));
      manifest.release.version = '0.9.0';
      writeFileSync(join(e, 'manifest.json'), JSON.stringify(manifest));
    }, /holds scripted-cli@0.9.0, not the release its name says/],
    ['the manifest\'s file counts not its entries\'', (e) => {
      const manifest = JSON.parse(readFileSync(join(e, 'manifest.json'), 'utf8'));
      manifest.files = 2;
      writeFileSync(join(e, 'manifest.json'), JSON.stringify(manifest));
    }, /counts 2 files/],
    ['an entry out of walk order (a file before its directory)', (e) => {
      const manifest = JSON.parse(readFileSync(join(e, 'manifest.json'), 'utf8'));
      manifest.entries.reverse();
      writeFileSync(join(e, 'manifest.json'), JSON.stringify(manifest));
    }, /does not follow its directory/],
  ];
  it.each(tampering)('%s: refused (ReleaseCorrupt naming it), discarded, and the next save stores it again', async (_, tamper, message) => {
    const store = join(base, `store-tamper-${++counter}`);
    await saveRelease(store, RELEASE, installedPrefix());
    const entry = join(store, releaseKey(RELEASE));
    execFileSync('chmod', ['-R', 'u+w', entry]);
    tamper(entry);
    const restored = restoreRelease(store, RELEASE, emptyPrefix(), RUN_USER);
    await expect(restored).rejects.toThrow(ReleaseCorrupt);
    await expect(restored).rejects.toThrow(message);
    await discardRelease(store, RELEASE);
    expect(readdirSync(store)).toEqual([]);
    expect(await saveRelease(store, RELEASE, installedPrefix())).toMatchObject({ stored: true });
  });

  it('property: any manifest (hostile paths, kinds, targets, sizes, digests) restores only what it names inside the prefix, or is refused as corrupt', async () => {
    const store = join(base, 'store-property');
    await saveRelease(store, RELEASE, installedPrefix());
    const entry = join(store, releaseKey(RELEASE));
    execFileSync('chmod', ['-R', 'u+w', entry]);
    const original = JSON.parse(readFileSync(join(entry, 'manifest.json'), 'utf8'));
    const segment = fc.constantFrom('lib', 'bin', 'bin', 'node_modules', 'pkg', 'cli.sh', 'blob', '..', '.', '', 'x', '/etc', 'passwd');
    // Whole paths the tree has, so an entry naming one again (or under a file) is tried often.
    const known = fc.constantFrom('bin', 'lib', 'empty', 'bin/pkg', 'lib/node_modules/pkg/cli.sh', 'lib/node_modules/pkg/blob.exe', 'lib/node_modules/pkg/cli.sh/x');
    const path = fc.oneof(known, fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/')));
    const item = fc.oneof(
      fc.record({ kind: fc.constant('dir'), path }),
      fc.record({ kind: fc.constant('file'), path, mode: fc.integer({ min: 0, max: 0o7777 }), size: fc.integer({ min: 0, max: 64 }), sha256: fc.constantFrom('0'.repeat(64), sha256('')) }),
      fc.record({ kind: fc.constant('link'), path, target: path }),
      fc.record({ kind: fc.constant('symlink'), path, target: fc.constantFrom('/etc/passwd', '../../..', 'cli.sh') }),
    );
    const outside = () => readdirSync(base).sort().join(',');
    await fc.assert(fc.asyncProperty(fc.array(item, { maxLength: 8 }), fc.integer({ min: 0, max: 3 }), async (extra, cut) => {
      const entries = [...original.entries.slice(0, original.entries.length - cut), ...extra];
      writeFileSync(join(entry, 'manifest.json'), JSON.stringify({ ...original, entries }));
      const before = outside();
      const into = emptyPrefix();
      const after = `${before},${into.slice(base.length + 1)}`.split(',').sort().join(',');
      try {
        await restoreRelease(store, RELEASE, into, RUN_USER);
      } catch (error) {
        expect(error).toBeInstanceOf(ReleaseCorrupt);
      }
      // Nothing was made beside the prefix, and nothing in it is a path the manifest could not name.
      expect(outside()).toBe(after);
      for (const line of listing(into)) expect(line.split(' ')[1]!.split('/').every((p) => p !== '..' && p !== '.' && p !== '')).toBe(true);
    }), { numRuns: 150 });
  });

  it('a store directory that is a symlink, or that the run user owns, is not used', async () => {
    const real = join(base, 'store-real');
    mkdirSync(real);
    symlinkSync(real, join(base, 'store-link'));
    await expect(saveRelease(join(base, 'store-link'), RELEASE, installedPrefix())).rejects.toThrow(StoreUnusable);
    const theirs = join(base, 'store-theirs');
    mkdirSync(theirs);
    chownSync(theirs, RUN_UID, RUN_UID);
    await expect(saveRelease(theirs, RELEASE, installedPrefix())).rejects.toThrow(/must be a directory owned by uid 0 and writable by it alone/);
    await expect(restoreRelease(theirs, RELEASE, emptyPrefix(), RUN_USER)).rejects.toThrow(StoreUnusable);
  });

  it('an install holding a FIFO is not stored, and leaves nothing in the store', async () => {
    const store = join(base, 'store-fifo');
    const prefix = installedPrefix();
    execFileSync('mkfifo', [join(prefix, 'lib/fifo')]);
    expect(await saveRelease(store, RELEASE, prefix)).toEqual({ stored: false, reason: 'lib/fifo is neither a regular file, a directory nor a symlink' });
    expect(readdirSync(store)).toEqual([]);
  });

  it('keeps the two most recently stored releases of a package, and every other package\'s', async () => {
    const store = join(base, 'store-prune');
    const other = { ...RELEASE, slug: 'other', package: 'other-cli' };
    await saveRelease(store, other, installedPrefix());
    for (const version of ['1.0.0', '1.0.1', '1.0.2']) await saveRelease(store, { ...RELEASE, version }, installedPrefix());
    expect(await pruneReleases(store, 'scripted-cli')).toEqual(['1.0.0']);
    expect(readdirSync(store).sort()).toEqual([releaseKey(other), releaseKey({ ...RELEASE, version: '1.0.1' }), releaseKey({ ...RELEASE, version: '1.0.2' })].sort());
    expect(await pruneReleases(store, 'scripted-cli')).toEqual([]);
    expect(await restoreRelease(store, { ...RELEASE, version: '1.0.0' }, emptyPrefix(), RUN_USER)).toEqual({ restored: false });
  });

  it('two runs storing the same release at once: one entry, whole', async () => {
    const store = join(base, 'store-race');
    const outcomes = await Promise.all([saveRelease(store, RELEASE, installedPrefix()), saveRelease(store, RELEASE, installedPrefix())]);
    expect(outcomes.filter((o) => o.stored)).toHaveLength(1);
    expect(readdirSync(store)).toEqual([releaseKey(RELEASE)]);
    expect(await restoreRelease(store, RELEASE, emptyPrefix(), RUN_USER)).toMatchObject({ restored: true, files: 3 });
  });
});

describe('runs installing through the store (a real npm, a registry on 127.0.0.1)', () => {
  let registry: ScriptedRegistry;
  let harness: ScriptedHarness;
  let runRoot: string;
  beforeAll(async () => {
    registry = await startScriptedRegistry();
    registry.publish('scripted-cli', '1.0.0', { 'cli.sh': SCRIPT }, { scripted: 'cli.sh' });
    harness = createScriptedHarness({ npmPackage: 'scripted-cli' });
    runRoot = mkdtempSync(join(tmpdir(), 'tcab-store-runs-'));
  });
  afterAll(async () => {
    await registry.close();
    harness.dispose();
    rmSync(runRoot, { recursive: true, force: true });
  });

  async function run(spec: Partial<RunSpecInput>, options: Partial<DriverOptions> = {}) {
    const sink = new MemorySink();
    const runId = `s-${Math.random().toString(36).slice(2, 10)}`;
    const env = { TCAB_RUN_ROOT: runRoot, TCAB_NPM_REGISTRY: registry.url, ANTHROPIC_API_KEY: 'sk-ant-fake-store-test' };
    const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'plain', ...spec }), {
      runId,
      env,
      sinks: [sink],
      user: resolveRunUser(env, 0),
      credentialSource: { kind: 'home', home: join(runRoot, 'no-home') },
      harnessesRoot: harness.root,
      keep: true,
      ...options,
    });
    const events = sink.events.map((e) => e.event);
    return { result, events, dir: join(runRoot, 'runs', runId) };
  }
  const installed = (events: HarnessEvent[]) => events.flatMap((e) => (e.type === 'system' && e.stage === 'install_harness' && e.status === 'completed' ? [e.message] : []))[0] ?? '';
  const tarballs = () => registry.requests.filter((r) => r.endsWith('.tgz')).length;
  const cliIn = (dir: string) => join(dir, 'prefix/lib/node_modules/scripted-cli/cli.sh');

  it('the first run installs with npm and stores the release; the next takes it from the store, checked, and runs it', async () => {
    const first = await run({});
    expect(first.result.outcome).toBe('succeeded');
    expect(installed(first.events)).toMatch(/^installed scripted-cli@1.0.0 \(newest\) in [\d.]+s; stored in the release store for the next run \(2 files, 0 MB\) in [\d.]+s$/);
    expect(tarballs()).toBe(1);
    const second = await run({});
    expect(second.result).toMatchObject({ outcome: 'succeeded', harness_version: '9.8.7' });
    expect(installed(second.events)).toMatch(/^installed scripted-cli@1.0.0 \(newest\) from the release store: 2 files, 0 MB, each checked against its SHA-256 and hard-linked \(read-only\), in [\d.]+s$/);
    expect(tarballs()).toBe(1); // the registry was asked for the newest version only
    // The same tree; its files the store's (root's, read-only), linked.
    expect(listing(join(second.dir, 'prefix'))).toEqual(listing(join(first.dir, 'prefix')).map(asStored));
  });

  it('a newer release published: the next run installs it with npm (the store never holds back the newest)', async () => {
    registry.publish('scripted-cli', '1.0.1', { 'cli.sh': SCRIPT.replace('9.8.7 (Scripted)', '9.8.8 (Scripted)') }, { scripted: 'cli.sh' });
    const newer = await run({});
    expect(newer.result).toMatchObject({ outcome: 'succeeded', harness_version: '9.8.8' });
    expect(installed(newer.events)).toMatch(/^installed scripted-cli@1.0.1 \(newest\) in [\d.]+s; stored/);
    const again = await run({});
    expect(installed(again.events)).toMatch(/^installed scripted-cli@1.0.1 \(newest\) from the release store/);
  });

  it('an agent that attacks the store and swaps its own harness binary cannot change what the next run executes', async () => {
    const store = join(runRoot, 'releases');
    const hostile = await run({ prompt: `tamper-store:${store}` });
    expect(hostile.result.outcome).toBe('succeeded');
    const report = readFileSync(join(hostile.dir, 'tamper-report'), 'utf8').trim().split('\n');
    // Every write into the store was refused; only its own copy, in its own prefix, could be changed.
    expect(report.filter((line) => !line.startsWith('refused') && !line.startsWith('replaced own'))).toEqual([]);
    expect(report.filter((line) => line.startsWith('refused append')).length).toBeGreaterThan(0);
    expect(report).toContain('refused plant');
    // Its installed file is the store's read-only inode: not writable in place; its name could be replaced.
    expect(report).toContain(`refused write own ${cliIn(hostile.dir)}`);
    expect(report).toContain(`replaced own ${cliIn(hostile.dir)}`);
    expect(readFileSync(cliIn(hostile.dir), 'utf8')).toContain('6.6.6 (poisoned)');
    const next = await run({});
    expect(next.result).toMatchObject({ outcome: 'succeeded', harness_version: '9.8.8' });
    expect(installed(next.events)).toMatch(/from the release store/);
    expect(sha256(readFileSync(cliIn(next.dir)))).toBe(sha256(SCRIPT.replace('9.8.7 (Scripted)', '9.8.8 (Scripted)')));
  });

  it('an entry changed by someone who could write the store: the run says so, discards it and installs from the registry', async () => {
    const store = join(runRoot, 'releases');
    const entry = join(store, readdirSync(store).find((name) => !name.startsWith('.') && existsSync(join(store, name, 'tree/lib/node_modules/scripted-cli/cli.sh')) && readFileSync(join(store, name, 'manifest.json'), 'utf8').includes('"1.0.1"'))!);
    const cli = join(entry, 'tree/lib/node_modules/scripted-cli/cli.sh');
    const text = readFileSync(cli, 'utf8');
    chmodSync(cli, 0o755);
    writeFileSync(cli, text.replace('9.8.8 (Scripted)', '6.6.6 (Poisoned)')); // same length
    const next = await run({});
    expect(next.result).toMatchObject({ outcome: 'succeeded', harness_version: '9.8.8' });
    expect(next.events).toContainEqual(expect.objectContaining({ type: 'warning', code: 'release_store_refused', message: expect.stringMatching(/cli.sh does not match its SHA-256 in the store's manifest: it was changed after it was stored; installing scripted-cli@1.0.1 from the registry instead$/) }));
    expect(installed(next.events)).toMatch(/^installed scripted-cli@1.0.1 \(newest\) in [\d.]+s; stored in the release store/);
    expect(sha256(readFileSync(cliIn(next.dir)))).toBe(sha256(text));
  });

  it('TCAB_PREFIX_ROOT (a driver Pod: the store and the prefixes on one hostPath): the prefix is made there, the release hard-linked into it, and removed at teardown', async () => {
    const prefixes = join(runRoot, 'prefixes');
    const env = { TCAB_RUN_ROOT: runRoot, TCAB_NPM_REGISTRY: registry.url, TCAB_PREFIX_ROOT: prefixes, ANTHROPIC_API_KEY: 'sk-ant-fake-store-test' };
    const outside = await run({ prompt: 'plain' }, { env, keep: false });
    expect(outside.result).toMatchObject({ outcome: 'succeeded', harness_version: '9.8.8' });
    expect(installed(outside.events)).toMatch(new RegExp(`^installed scripted-cli@1.0.1 \\(newest\\) from the release store: 2 files, 0 MB, each checked against its SHA-256 and hard-linked \\(read-only\\), in [\\d.]+s$`));
    const stage = outside.events.find((e) => e.type === 'system' && e.stage === 'install_harness' && e.status === 'started');
    expect(stage).toMatchObject({ message: expect.stringMatching(new RegExp(`into ${prefixes}/\\d+\\.[0-9a-f-]{36}$`)) });
    expect(readdirSync(prefixes)).toEqual([]);
    expect(existsSync(outside.dir)).toBe(false);
    const teardown = outside.events.find((e) => e.type === 'system' && e.stage === 'teardown' && e.status === 'completed');
    const rss = /^run home, workspace and install prefix removed; the driver's peak RSS (\d+) MB$/.exec(teardown?.type === 'system' ? teardown.message : '');
    // This test process stands in for the driver process: its own peak, at least Node's own.
    expect(Number(rss?.[1])).toBeGreaterThan(20);
    expect(Number(rss?.[1])).toBeLessThanOrEqual(Math.round(process.resourceUsage().maxRSS / 1024));
  });

  it('TCAB_RELEASE_STORE=off: every run installs with npm and nothing is stored', async () => {
    const off = await run({}, { env: { TCAB_RUN_ROOT: runRoot, TCAB_NPM_REGISTRY: registry.url, TCAB_RELEASE_STORE: 'off', ANTHROPIC_API_KEY: 'sk-ant-fake-store-test' } });
    expect(off.result.outcome).toBe('succeeded');
    expect(installed(off.events)).toMatch(/^installed scripted-cli in [\d.]+s$/);
  });
});
