import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_REPORT_BYTES, readHomeReports } from './home-files.ts';

let root: string;
let home: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tcab-reports-'));
  home = join(root, 'home');
  mkdirSync(home);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('readHomeReports (files a CLI wrote into the run HOME)', () => {
  it('reads regular files; a missing one is absent', async () => {
    writeFileSync(join(home, 'usage.json'), '{"a":1}');
    expect(await readHomeReports(home, ['usage.json', 'missing.json'])).toEqual({ 'usage.json': '{"a":1}' });
  });

  it('never follows a symlink the run user planted to a driver-side secret', async () => {
    writeFileSync(join(root, 'secret'), 'sk-fake-driver-secret');
    symlinkSync(join(root, 'secret'), join(home, 'usage.json'));
    expect(await readHomeReports(home, ['usage.json'])).toEqual({});
  });

  it('skips directories and oversized files', async () => {
    mkdirSync(join(home, 'dir.json'));
    writeFileSync(join(home, 'big.json'), Buffer.alloc(MAX_REPORT_BYTES + 1, 0x20));
    expect(await readHomeReports(home, ['dir.json', 'big.json'])).toEqual({});
  });

  it('refuses a name that is not a bare file name', async () => {
    await expect(readHomeReports(home, ['../secret'])).rejects.toThrow(/file name directly in HOME/);
    await expect(readHomeReports(home, ['..'])).rejects.toThrow(/file name directly in HOME/);
  });
});
