// The release store: installed harness releases kept on the machine (a node, a workstation's run root), so a run
// whose newest release some earlier run already installed gets that tree in well under a second instead of npm
// unpacking the same tarballs again (Claude Code: one 400 MB binary, ~5 s).
//
// An entry is made by the driver, never by a run: right after the manifest's own install command finished (as the
// run user, before any session, so no agent has run yet), the driver puts the installed prefix into a staging
// directory it alone can write, with the SHA-256 of every file, and renames it into place (`<store>/<key>`, the key
// naming the package, the version resolved as the newest, the registry's integrity of its tarballs, and the install
// command). The store's files are the driver's and read-only. Every restore checks each file's size and SHA-256
// against the entry's manifest before the run gets it: a changed file is refused, the entry discarded and the release
// installed from the registry again. How files move depends on who the run user is:
//   - a root driver and another run user (a Pod, `sudo tcab run`): the installed files themselves are made root's and
//     read-only in place and linked into the entry (no copy), and a later run gets the entry's files hard-linked into
//     its prefix. The run user can neither write nor chmod such an inode (it can only replace a name in its own
//     prefix), so sharing it is safe; a 400 MB binary costs its hash (~0.4 s), no copy. Across mounts (a Pod's
//     hostPath store and its emptyDir) the kernel refuses links and files are copied;
//   - the driver is the run user (a workstation without root): files are copied, hashed as they are copied, so what
//     the agent may write through its prefix never reaches the store's inodes.
// What the check cannot catch: a manifest and its files rewritten together by someone who can write the store,
// which only its owner can (on a workstation run without root, the agent runs as that owner).
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lchown, link, lstat, mkdir, open, readdir, readlink, rename, symlink, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ReleaseId, StoreManifest } from '../../shared/release-store.ts';
import type { StoreEntry } from '../../shared/release-store.ts';
import { ConfinementError, HeldDir, MAX_DEPTH, onlyDriverWrites, openRegularFileIn, removeConfinedTree } from '../confined-fs.ts';
import type { RunUser } from '../process.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** Beyond these an install is not stored (it still ran): no harness comes near them (Claude Code: 11 files, 0.4 GB). */
export const STORE_LIMITS = { entries: 200_000, bytes: 8 * 2 ** 30, manifestBytes: 64 << 20 };
const MANIFEST = 'manifest.json';
const TREE = 'tree';
const CHUNK = 4 << 20;

/** The entry's name: a digest of the release, so any change of package, version, integrity or command is another. */
export function releaseKey(id: ReleaseId): string {
  const parsed = ReleaseId.parse(id);
  const canonical = JSON.stringify([parsed.slug, parsed.package, parsed.version, parsed.integrity, parsed.platform?.package ?? null, parsed.platform?.integrity ?? null, parsed.command]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 40);
}

/** A store entry that does not hold what its manifest says: it is discarded and the release installed again. */
export class ReleaseCorrupt extends Error {
  override name = 'ReleaseCorrupt';
}

/** The store directory cannot be used (someone else's, writable by others, not a directory): runs install as before. */
export class StoreUnusable extends Error {
  override name = 'StoreUnusable';
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;
const me = () => process.getuid?.();

/** Only the driver may be able to change what the store holds: its owner, and no group or other write bit. */
function assertDriverOwned(info: Stats, shown: string): void {
  const uid = me();
  if (!onlyDriverWrites(info, uid)) {
    throw new ReleaseCorrupt(`${shown} is owned by uid ${info.uid} with mode ${(info.mode & 0o7777).toString(8)}: only the driver (uid ${uid}) may be able to write the release store`);
  }
}

/** The store's root directory, made when absent; refused when it is a symlink or anyone but the driver can write it. */
async function openStore(root: string, create: boolean): Promise<HeldDir | undefined> {
  if (create) await mkdir(root, { recursive: true, mode: 0o755 });
  let dir: HeldDir;
  try {
    dir = await HeldDir.open(root, { follow: false });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw new StoreUnusable(`the release store ${root} cannot be opened: ${(error as Error).message}`, { cause: error });
  }
  const info = await dir.handle.stat();
  const uid = me();
  if (!onlyDriverWrites(info, uid)) {
    await dir.close();
    throw new StoreUnusable(`the release store ${root} must be a directory owned by uid ${uid} and writable by it alone (it is uid ${info.uid}, mode ${(info.mode & 0o7777).toString(8)})`);
  }
  return dir;
}

/**
 * Reads the first `limit` bytes (and one more, so a longer file is seen as such) of an open file, hashing them, and
 * writes them to `to` when one is given; returns how many it read and their SHA-256.
 */
async function copyHashing(from: FileHandle, to: FileHandle | undefined, limit: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, limit + 1)));
  let position = 0;
  while (position <= limit) {
    const { bytesRead } = await from.read(buffer, 0, Math.min(buffer.length, limit + 1 - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    if (to) for (let written = 0; written < bytesRead;) written += (await to.write(chunk, written, bytesRead - written, position + written)).bytesWritten;
    position += bytesRead;
  }
  return { bytes: position, sha256: hash.digest('hex') };
}

async function createFileIn(dir: HeldDir, name: string): Promise<FileHandle> {
  return open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
}

/** Removes a store entry or staging directory the driver made read-only (its directories are 0555). */
async function removeStoreTree(path: string): Promise<void> {
  await makeWritable(path).catch(() => undefined);
  await removeConfinedTree(path).catch(() => undefined);
}

async function makeWritable(path: string, depth = 0): Promise<void> {
  const dir = await HeldDir.open(path, { follow: false });
  try {
    await dir.handle.chmod(0o700);
    if (depth >= MAX_DEPTH) return;
    for (const entry of await readdir(dir.path, { withFileTypes: true })) {
      if (entry.isDirectory()) await makeWritable(dir.at(entry.name), depth + 1);
    }
  } finally {
    await dir.close();
  }
}

interface Walk {
  entries: StoreEntry[];
  files: number;
  bytes: number;
  /** The staging tree's absolute path: a second name of a file is linked to its first copy there. */
  stagingTree: string;
  /** `<dev>:<ino>` of each file with more than one name -> the path it was first stored under. */
  firstNames: Map<string, string>;
  /**
   * The installed files themselves become the store's (made root's and read-only in place, then linked), instead of
   * copied: a root driver, another run user, and the prefix on the store's mount. The run keeps using them: what it
   * runs is then exactly what the store holds, and nobody but root can change it.
   */
  adopt: boolean;
}

/** Copies the installed tree under `src` into `dst` (a staging directory), recording every entry with its digest. */
async function snapshotTree(src: HeldDir, dst: HeldDir, rel: string, depth: number, walk: Walk): Promise<void> {
  for (const name of (await readdir(src.path)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    if (walk.entries.length >= STORE_LIMITS.entries) throw new ConfinementError(`more than ${STORE_LIMITS.entries} entries`);
    const info = await lstat(src.at(name));
    if (info.isDirectory()) {
      if (depth + 1 >= MAX_DEPTH) throw new ConfinementError(`${path} is nested deeper than ${MAX_DEPTH}`);
      walk.entries.push({ kind: 'dir', path });
      const from = await src.sub(name);
      const to = await dst.sub(name, { mode: 0o700, owner: {} }).catch(async (error: unknown) => {
        await from.close();
        throw error;
      });
      try {
        await snapshotTree(from, to, path, depth + 1, walk);
        await to.handle.chmod(0o555);
      } finally {
        await Promise.all([from.close(), to.close()]);
      }
    } else if (info.isSymbolicLink()) {
      walk.entries.push({ kind: 'symlink', path, target: await readlink(src.at(name)) });
    } else {
      const file = await openRegularFileIn(src, name).catch(() => undefined);
      if (!file) throw new ConfinementError(`${path} is neither a regular file, a directory nor a symlink`);
      const inode = `${file.info.dev}:${file.info.ino}`;
      const first = file.info.nlink > 1 ? walk.firstNames.get(inode) : undefined;
      if (first !== undefined) {
        await file.handle.close();
        await link(join(walk.stagingTree, first), dst.at(name));
        walk.entries.push({ kind: 'link', path, target: first });
        continue;
      }
      if (file.info.nlink > 1) walk.firstNames.set(inode, path);
      if (walk.bytes + file.info.size > STORE_LIMITS.bytes) {
        await file.handle.close();
        throw new ConfinementError(`more than ${STORE_LIMITS.bytes} bytes`);
      }
      if (walk.adopt) {
        try {
          const mode = file.info.mode & 0o777;
          await file.handle.chown(0, 0);
          await file.handle.chmod(mode & 0o555);
          const read = await copyHashing(file.handle, undefined, file.info.size);
          if (read.bytes !== file.info.size) throw new ConfinementError(`${path} changed size while it was stored`);
          await link(src.at(name), dst.at(name));
          walk.entries.push({ kind: 'file', path, mode, size: read.bytes, sha256: read.sha256 });
          walk.files += 1;
          walk.bytes += read.bytes;
        } finally {
          await file.handle.close();
        }
        continue;
      }
      try {
        const to = await createFileIn(dst, name);
        try {
          const copied = await copyHashing(file.handle, to, file.info.size);
          if (copied.bytes !== file.info.size) throw new ConfinementError(`${path} changed size while it was stored`);
          const mode = file.info.mode & 0o777;
          await to.chmod(mode & 0o555);
          walk.entries.push({ kind: 'file', path, mode, size: copied.bytes, sha256: copied.sha256 });
          walk.files += 1;
          walk.bytes += copied.bytes;
        } finally {
          await to.close();
        }
      } finally {
        await file.handle.close();
      }
    }
  }
}

/** Whether a file in `from` can be hard-linked into `to` (one mount: a Pod's emptyDir and hostPath are two). */
async function linkable(from: string, to: string): Promise<boolean> {
  const probe = `.tcab-link-probe-${randomBytes(6).toString('hex')}`;
  const handle = await open(join(from, probe), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  await handle.close();
  try {
    await link(join(from, probe), join(to, probe));
    await unlink(join(to, probe));
    return true;
  } catch {
    return false;
  } finally {
    await unlink(join(from, probe)).catch(() => undefined);
  }
}

export type SaveOutcome = { stored: true; files: number; bytes: number } | { stored: false; reason: string };

/**
 * Stores the tree installed in `prefix` as release `id`, unless the store has it already (another run stored it
 * first: 'present'). Made under a staging name and renamed into place, so a reader sees a whole entry or none.
 */
export async function saveRelease(storeRoot: string, id: ReleaseId, prefix: string, owner: RunUser = {}): Promise<SaveOutcome> {
  const key = releaseKey(id);
  const store = (await openStore(storeRoot, true))!;
  const staging = `.staging-${key}-${randomBytes(6).toString('hex')}`;
  let stagingMade = false;
  try {
    if (await lstat(store.at(key)).then(() => true, () => false)) return { stored: false, reason: 'present' };
    const stage = await store.sub(staging, { mode: 0o700, owner: {} });
    stagingMade = true;
    const adopt = me() === 0 && owner.uid !== undefined && owner.uid !== 0 && (await linkable(prefix, storeRoot));
    const walk: Walk = { entries: [], files: 0, bytes: 0, stagingTree: join(storeRoot, staging, TREE), firstNames: new Map(), adopt };
    try {
      const tree = await stage.sub(TREE, { mode: 0o700, owner: {} });
      const source = await HeldDir.open(prefix, { follow: false });
      try {
        await snapshotTree(source, tree, '', 0, walk);
        await tree.handle.chmod(0o555);
      } finally {
        await Promise.all([source.close(), tree.close()]);
      }
      const manifest: StoreManifest = { format: 1, release: ReleaseId.parse(id), entries: walk.entries, files: walk.files, bytes: walk.bytes, stored_at: new Date().toISOString() };
      const handle = await createFileIn(stage, MANIFEST);
      try {
        await handle.writeFile(JSON.stringify(manifest));
        await handle.chmod(0o444);
      } finally {
        await handle.close();
      }
      await stage.handle.chmod(0o555);
    } finally {
      await stage.close();
    }
    try {
      await rename(store.at(staging), store.at(key));
    } catch (error) {
      // Another run stored the same release between our check and now: theirs stays.
      if (errnoOf(error) === 'ENOTEMPTY' || errnoOf(error) === 'EEXIST') return { stored: false, reason: 'present' };
      throw error;
    }
    stagingMade = false;
    return { stored: true, files: walk.files, bytes: walk.bytes };
  } catch (error) {
    if (error instanceof ConfinementError) return { stored: false, reason: error.message };
    throw error;
  } finally {
    if (stagingMade) await removeStoreTree(`${storeRoot}/${staging}`);
    await store.close();
  }
}

/** Reads and checks an entry's manifest: the driver's own file, bounded, valid, and about this very release. */
async function readManifest(entry: HeldDir, id: ReleaseId): Promise<StoreManifest> {
  const file = await openRegularFileIn(entry, MANIFEST).catch(() => undefined);
  if (!file) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} is missing or not a regular file`);
  try {
    assertDriverOwned(file.info, `${entry.shown}/${MANIFEST}`);
    if (file.info.size > STORE_LIMITS.manifestBytes) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} is larger than ${STORE_LIMITS.manifestBytes} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await file.handle.readFile('utf8'));
    } catch (error) {
      throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} is not JSON: ${(error as Error).message}`);
    }
    const result = StoreManifest.safeParse(parsed);
    if (!result.success) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} is not a store manifest: ${result.error.issues[0]?.path.join('.')}: ${result.error.issues[0]?.message}`);
    if (!isDeepStrictEqual(result.data.release, ReleaseId.parse(id))) throw new ReleaseCorrupt(`${entry.shown} holds ${result.data.release.package}@${result.data.release.version}, not the release its name says`);
    const paths = new Set<string>();
    for (const item of result.data.entries) {
      if (paths.has(item.path)) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} names ${item.path} twice`);
      paths.add(item.path);
    }
    return result.data;
  } finally {
    await file.handle.close();
  }
}

/** `linked`: every file was hard-linked from the store (none copied). */
export type RestoreOutcome = { restored: false } | { restored: true; files: number; bytes: number; linked: boolean };

/**
 * Puts release `id` from the store into the (empty) `prefix`, each file checked against the entry's size and SHA-256
 * first: hard-linked when the driver is root and the run user another (the store's read-only inode is then safe to
 * share), else copied and made the run user's as an install would have left it. Throws ReleaseCorrupt when anything
 * differs (the caller discards the entry and installs from the registry); `restored: false` when the store has no
 * such entry.
 */
export async function restoreRelease(storeRoot: string, id: ReleaseId, prefix: string, owner: RunUser): Promise<RestoreOutcome> {
  const store = await openStore(storeRoot, false);
  if (!store) return { restored: false };
  try {
    let entry: HeldDir;
    try {
      entry = await store.sub(releaseKey(id));
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return { restored: false };
      throw new ReleaseCorrupt(`the store's entry for ${id.package}@${id.version} is not a directory: ${(error as Error).message}`);
    }
    try {
      assertDriverOwned(await entry.handle.stat(), entry.shown);
      const manifest = await readManifest(entry, id);
      const linking = me() === 0 && owner.uid !== undefined && owner.uid !== 0;
      const linked = await putEntries(entry, manifest, { prefix, owner, linkFrom: linking ? join(storeRoot, releaseKey(id), TREE) : undefined }).catch((error: unknown) => {
        // A name the entry's tree lacks, or one that is not the directory the manifest says: the entry is not whole.
        if (['ENOENT', 'ENOTDIR', 'EEXIST', 'ELOOP', 'EISDIR'].includes(errnoOf(error) ?? '') || error instanceof ConfinementError) throw new ReleaseCorrupt(`${entry.shown}: ${(error as Error).message}`, { cause: error });
        throw error;
      });
      return { restored: true, files: manifest.files, bytes: manifest.bytes, linked };
    } finally {
      await entry.close();
    }
  } finally {
    await store.close();
  }
}

interface PutOptions {
  prefix: string;
  owner: RunUser;
  /** The entry's tree (absolute) when files are hard-linked from it rather than copied. */
  linkFrom?: string;
}

/**
 * The manifest's entries in walk order: a stack of the open (store, prefix) directory pairs down to the current one.
 * Resolves whether every file was linked.
 */
async function putEntries(entry: HeldDir, manifest: StoreManifest, { prefix, owner, linkFrom: linkable }: PutOptions): Promise<boolean> {
  // Linking needs the store and the prefix on one mount: a Pod's hostPath store and its emptyDir are two (EXDEV), and
  // from the first refusal on, files are copied.
  let linkFrom = linkable;
  const tree = await entry.sub(TREE).catch((error: unknown) => {
    throw new ReleaseCorrupt(`${entry.shown}/${TREE}: ${(error as Error).message}`);
  });
  const stack: { path: string; store: HeldDir; prefix: HeldDir }[] = [];
  const target = await HeldDir.open(prefix, { follow: false });
  stack.push({ path: '', store: tree, prefix: target });
  let files = 0;
  let bytes = 0;
  const stored = new Set<string>();
  try {
    for (const item of manifest.entries) {
      const cut = item.path.lastIndexOf('/');
      const parent = cut === -1 ? '' : item.path.slice(0, cut);
      const name = item.path.slice(cut + 1);
      while (stack.length > 1 && stack.at(-1)!.path !== parent) {
        const done = stack.pop()!;
        await Promise.all([done.store.close(), done.prefix.close()]);
      }
      if (stack.at(-1)!.path !== parent) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST}: ${item.path} does not follow its directory`);
      const top = stack.at(-1)!;
      if (item.kind === 'dir') {
        const from = await top.store.sub(name).catch((error: unknown) => {
          throw new ReleaseCorrupt(`${item.path}: ${(error as Error).message}`);
        });
        assertDriverOwned(await from.handle.stat(), `${entry.shown}/${TREE}/${item.path}`);
        const to = await top.prefix.sub(name, { mode: 0o755, owner });
        stack.push({ path: item.path, store: from, prefix: to });
      } else if (item.kind === 'symlink') {
        await symlink(item.target, top.prefix.at(name));
        if (owner.uid !== undefined) await lchown(top.prefix.at(name), owner.uid, owner.gid ?? owner.uid);
      } else if (item.kind === 'link') {
        // Another name of a file already put (and checked): linked to that one, wherever it came from.
        if (!stored.has(item.target)) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST}: ${item.path} links to ${item.target}, which is not a file before it`);
        await link(join(linkFrom ?? prefix, item.target), top.prefix.at(name));
      } else {
        const file = await openRegularFileIn(top.store, name).catch(() => undefined);
        if (!file) throw new ReleaseCorrupt(`${item.path} is missing from the store or not a regular file`);
        try {
          assertDriverOwned(file.info, `${entry.shown}/${TREE}/${item.path}`);
          if (file.info.size !== item.size) throw new ReleaseCorrupt(`${item.path} is ${file.info.size} bytes in the store, its manifest says ${item.size}`);
          const changed = () => new ReleaseCorrupt(`${item.path} does not match its SHA-256 in the store's manifest: it was changed after it was stored`);
          let linked = false;
          if (linkFrom) {
            const read = await copyHashing(file.handle, undefined, item.size);
            if (read.bytes !== item.size || read.sha256 !== item.sha256) throw changed();
            linked = await link(top.store.at(name), top.prefix.at(name)).then(() => true, (error: unknown) => {
              if (errnoOf(error) !== 'EXDEV') throw error;
              linkFrom = undefined;
              return false;
            });
          }
          if (!linked) {
            const to = await createFileIn(top.prefix, name);
            try {
              const copied = await copyHashing(file.handle, to, item.size);
              if (copied.bytes !== item.size || copied.sha256 !== item.sha256) throw changed();
              await to.chmod(item.mode);
              if (owner.uid !== undefined) await to.chown(owner.uid, owner.gid ?? owner.uid);
            } finally {
              await to.close();
            }
          }
        } finally {
          await file.handle.close();
        }
        stored.add(item.path);
        files += 1;
        bytes += item.size;
      }
    }
    if (files !== manifest.files || bytes !== manifest.bytes) throw new ReleaseCorrupt(`${entry.shown}/${MANIFEST} counts ${manifest.files} files, ${manifest.bytes} bytes; its entries hold ${files}, ${bytes}`);
    return linkFrom !== undefined;
  } finally {
    await Promise.all(stack.flatMap((s) => [s.store.close(), s.prefix.close()]));
  }
}

/** Takes a corrupt entry out of the store (renamed aside first, so no reader finds half of it), if it still can. */
export async function discardRelease(storeRoot: string, id: ReleaseId): Promise<void> {
  await discardKey(storeRoot, releaseKey(id));
}

async function discardKey(storeRoot: string, key: string): Promise<void> {
  const store = await openStore(storeRoot, false).catch(() => undefined);
  if (!store) return;
  const aside = `.discarded-${randomBytes(6).toString('hex')}`;
  try {
    await rename(store.at(key), store.at(aside));
  } catch {
    await store.close();
    return;
  }
  await store.close();
  await removeStoreTree(`${storeRoot}/${aside}`);
}

/** How many releases of one package the store keeps: the newest stored, and the one before it (a run may still use it). */
export const KEEP_PER_PACKAGE = 2;

/**
 * Keeps the store bounded: of `pkg`'s entries, only the KEEP_PER_PACKAGE most recently stored stay (Claude Code's is
 * ~400 MB a release). Entries it cannot read are left alone: the next restore of one discards it if it is corrupt.
 * Returns the versions removed.
 */
export async function pruneReleases(storeRoot: string, pkg: string): Promise<string[]> {
  const store = await openStore(storeRoot, false).catch(() => undefined);
  if (!store) return [];
  const found: { key: string; version: string; storedAt: string }[] = [];
  try {
    for (const key of await readdir(store.path)) {
      if (!/^[0-9a-f]{40}$/.test(key)) continue;
      const entry = await store.sub(key).catch(() => undefined);
      if (!entry) continue;
      try {
        const file = await openRegularFileIn(entry, MANIFEST).catch(() => undefined);
        if (!file) continue;
        try {
          if (file.info.size > STORE_LIMITS.manifestBytes) continue;
          const parsed = StoreManifest.safeParse(JSON.parse(await file.handle.readFile('utf8')));
          if (parsed.success && parsed.data.release.package === pkg) found.push({ key, version: parsed.data.release.version, storedAt: parsed.data.stored_at });
        } catch {
          // not JSON: left for a restore to discard
        } finally {
          await file.handle.close();
        }
      } finally {
        await entry.close();
      }
    }
  } finally {
    await store.close();
  }
  const old = found.sort((a, b) => b.storedAt.localeCompare(a.storedAt)).slice(KEEP_PER_PACKAGE);
  for (const { key } of old) await discardKey(storeRoot, key);
  return old.map((o) => o.version);
}
