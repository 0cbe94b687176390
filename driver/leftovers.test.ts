import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { environHasHome, findLeftovers, killLeftovers, processRunning } from './leftovers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tcab-leftovers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('environHasHome', () => {
  it.each([
    ['PATH=/bin\0HOME=/tmp/tcab/runs/r1/home\0', '/tmp/tcab/runs/r1/home', true],
    ['HOME=/tmp/tcab/runs/r1/home', '/tmp/tcab/runs/r1/home', true],
    ['HOME=/tmp/tcab/runs/r1/home/sub\0', '/tmp/tcab/runs/r1/home', false],
    ['HOME=/tmp/tcab/runs/r10/home\0', '/tmp/tcab/runs/r1/home', false],
    ['XHOME=/tmp/tcab/runs/r1/home\0', '/tmp/tcab/runs/r1/home', false],
    ['', '/tmp/tcab/runs/r1/home', false],
  ])('%j has HOME=%s: %s', (environ, home, expected) => {
    expect(environHasHome(environ, home)).toBe(expected);
  });
});

describe('findLeftovers / killLeftovers', () => {
  it('finds live processes by their HOME (skipping zombies and unreadable entries) and kills them', async () => {
    // A fake /proc: 101 is ours, 102 another run's, 103 a zombie of ours, 104 unreadable, "self" not a pid.
    const proc = join(dir, 'proc');
    const entry = (pid: string, files: Record<string, string>) => {
      mkdirSync(join(proc, pid), { recursive: true });
      for (const [name, content] of Object.entries(files)) writeFileSync(join(proc, pid, name), content);
    };
    entry('101', { environ: 'HOME=/runs/a/home\0PATH=/bin\0', stat: '101 (node (hub)) S 1 101', comm: 'node (hub)\n' });
    entry('102', { environ: 'HOME=/runs/b/home\0', stat: '102 (sleep) S 1 102', comm: 'sleep\n' });
    entry('103', { environ: 'HOME=/runs/a/home\0', stat: '103 (sh) Z 1 103', comm: 'sh\n' });
    entry('104', {});
    entry('self', { environ: 'HOME=/runs/a/home\0' });
    expect(await findLeftovers('/runs/a/home', proc)).toEqual([{ pid: 101, name: 'node (hub)' }]);
  });

  it('kills a real process that carries the HOME, and only that one', async () => {
    const home = join(dir, 'home-a');
    const other = join(dir, 'home-b');
    const start = (h: string) => spawn('sleep', ['600'], { env: { ...process.env, HOME: h }, detached: true, stdio: 'ignore' });
    const mine = start(home);
    const theirs = start(other);
    try {
      const exited = new Promise((resolve) => mine.once('exit', resolve));
      expect(await killLeftovers(home)).toEqual([{ pid: mine.pid, name: 'sleep' }]);
      await exited;
      expect(await processRunning(mine.pid!)).toBe(false);
      expect(await processRunning(theirs.pid!)).toBe(true);
    } finally {
      theirs.kill('SIGKILL');
    }
  });
});
