import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyTestCase, skippedMessage } from './test-case.ts';
import { treeSnapshot } from '../test/support/tree-snapshot.ts';

let sandbox: string;
beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-test-case-'));
  mkdirSync(join(sandbox, 'tc/mnt'), { recursive: true });
  mkdirSync(join(sandbox, 'workspace'));
  writeFileSync(join(sandbox, 'tc/kept.txt'), 'kept');
});
afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

describe('copyTestCase', () => {
  it('finding 1: an entry on another filesystem than the test case (a mount point) is skipped and reported, never copied', async () => {
    // Root (here and in CI) can mount; the mount is undone whatever happens.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tcab-test', join(sandbox, 'tc/mnt')]);
    try {
      writeFileSync(join(sandbox, 'tc/mnt/on-the-mount.txt'), 'another filesystem');
      const before = treeSnapshot(join(sandbox, 'tc'));
      const skipped = await copyTestCase(join(sandbox, 'tc'), join(sandbox, 'workspace'), {});
      expect(skipped).toEqual([{ path: 'mnt', reason: 'on another filesystem: a mount point' }]);
      expect(skippedMessage(skipped)).toBe('1 test case entry was not copied: mnt (on another filesystem: a mount point)');
      expect(existsSync(join(sandbox, 'workspace/mnt'))).toBe(false);
      expect(readFileSync(join(sandbox, 'workspace/kept.txt'), 'utf8')).toBe('kept');
      expect(treeSnapshot(join(sandbox, 'tc'))).toEqual(before);
    } finally {
      execFileSync('umount', [join(sandbox, 'tc/mnt')]);
    }
  });
});
