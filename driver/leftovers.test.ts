import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canReadEnvironOf, environHasHome, findLeftovers, hasEffectiveCapability, killLeftovers, killLeftoversAs, processRunning } from './leftovers.ts';

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

describe('a driver that cannot read the run user\'s environs (the Pod\'s root without SYS_PTRACE)', () => {
  it('reads CapEff\'s bits: SYS_PTRACE is bit 19', () => {
    expect(hasEffectiveCapability('CapPrm:\t0000000000080000\nCapEff:\t0000000000080000\n', 19n)).toBe(true);
    // The driver Pod's set: CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID.
    expect(hasEffectiveCapability('CapEff:\t00000000000000eb\n', 19n)).toBe(false);
    expect(hasEffectiveCapability('CapPrm:\t0000000000080000\nCapEff:\t0000000000000000\n', 19n)).toBe(false);
    expect(hasEffectiveCapability('no capabilities here', 19n)).toBe(false);
  });

  it('a driver running as the run user, or holding SYS_PTRACE, scans in-process', async () => {
    expect(await canReadEnvironOf({})).toBe(true);
    const proc = join(dir, 'proc-caps');
    mkdirSync(join(proc, 'self'), { recursive: true });
    writeFileSync(join(proc, 'self', 'status'), 'CapEff:\t00000000000000eb\n');
    expect(await canReadEnvironOf({ uid: 4242, gid: 4242 }, proc)).toBe(process.getuid?.() === 4242);
    writeFileSync(join(proc, 'self', 'status'), 'CapEff:\t00000000000800eb\n');
    expect(await canReadEnvironOf({ uid: 4242, gid: 4242 }, proc)).toBe(true);
  });

  it('the run user scans and kills its own leftovers (this file as a program): the one with the HOME, not another run\'s', async () => {
    expect(process.getuid!()).toBe(0); // the suite runs as root, like the driver it stands for
    const home = join(dir, 'home-as');
    const other = join(dir, 'home-other');
    const start = (h: string) => spawn('sleep', ['600'], { env: { PATH: '/usr/bin:/bin', HOME: h }, uid: 1000, gid: 1000, detached: true, stdio: 'ignore' });
    const mine = start(home);
    const theirs = start(other);
    try {
      const exited = new Promise((resolve) => mine.once('exit', resolve));
      expect(await killLeftoversAs(home, { uid: 1000, gid: 1000 })).toEqual([{ pid: mine.pid, name: 'sleep' }]);
      await exited;
      expect(await processRunning(theirs.pid!)).toBe(true);
    } finally {
      theirs.kill('SIGKILL');
    }
  });
});
