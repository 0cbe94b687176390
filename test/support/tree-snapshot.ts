// A snapshot of everything under a directory (path, type, mode, owner, size, mtime, link target, content hash of
// small files), to assert that an operation changed nothing outside the place it was allowed to touch.
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface TreeEntry {
  type: 'file' | 'dir' | 'symlink' | 'fifo' | 'other';
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtimeMs: number;
  nlink: number;
  target?: string;
  sha256?: string;
}

/**
 * @param ignore relative paths whose subtree is left out (e.g. the run's own directory)
 * @param ignoreTimes relative paths of directories whose mtime may change (a parent the run adds its directory to)
 */
export function treeSnapshot(root: string, options: { ignore?: string[]; ignoreTimes?: string[] } = {}): Record<string, TreeEntry> {
  const out: Record<string, TreeEntry> = {};
  const walk = (path: string) => {
    const rel = relative(root, path) || '.';
    if (options.ignore?.includes(rel)) return;
    const info = lstatSync(path);
    const type = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : info.isFile() ? 'file' : info.isFIFO() ? 'fifo' : 'other';
    const entry: TreeEntry = { type, mode: info.mode, uid: info.uid, gid: info.gid, size: type === 'dir' ? 0 : info.size, mtimeMs: options.ignoreTimes?.includes(rel) ? 0 : info.mtimeMs, nlink: type === 'dir' ? 0 : info.nlink };
    if (type === 'symlink') entry.target = readlinkSync(path);
    if (type === 'file' && info.size < 1 << 20) entry.sha256 = createHash('sha256').update(readFileSync(path)).digest('hex');
    out[rel] = entry;
    if (type === 'dir') for (const name of readdirSync(path).sort()) walk(join(path, name));
  };
  walk(root);
  return out;
}
