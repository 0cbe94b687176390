// runProcess with real processes: the child's exit ends it, output held open by leftovers is drained for a
// bounded time, and the deadline holds whatever escaped the process group.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runProcess } from './process.ts';
import type { ProcessSpec } from './process.ts';
import { processRunning } from './leftovers.ts';

let dir: string;
const escaped: number[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-process-test-'));
});
afterAll(() => {
  // Processes that left the group on purpose are the test's to end (teardown does it in a run).
  for (const pid of escaped) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

async function sh(script: string, options: Partial<ProcessSpec> = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const began = Date.now();
  const outcome = await runProcess({
    argv: ['/bin/sh', '-c', script],
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DIR: dir },
    user: {},
    onStdout: (line) => stdout.push(line.text),
    onStderr: (line) => stderr.push(line.text),
    ...options,
  });
  return { outcome, stdout, stderr, elapsedMs: Date.now() - began, finishedAt: Date.now() };
}

const pidIn = (name: string) => Number(readFileSync(join(dir, name), 'utf8'));
/** A SIGKILLed process is gone a few scheduler ticks later; nothing announces it to a non-parent. */
const gone = (pid: number) => vi.waitFor(async () => expect(await processRunning(pid)).toBe(false), { timeout: 5000, interval: 10 });

describe('runProcess', () => {
  it('finding 4: a background process holding stdout does not keep the process running; it is killed with the group', async () => {
    const { outcome, stdout, elapsedMs } = await sh('echo first; sleep 600 & echo $! > "$DIR/bg.pid"; printf last; exit 0', { drainGraceMs: 300 });
    expect(outcome).toMatchObject({ code: 0, signal: null, timedOut: false, cancelled: false, outputHeldOpen: true });
    // Everything printed before the exit arrives, the unterminated last line included.
    expect(stdout).toEqual(['first', 'last']);
    expect(elapsedMs).toBeLessThan(5000);
    await gone(pidIn('bg.pid'));
  });

  it('finding 4: a daemon in its own session holding stdout does not keep the process running', async () => {
    const { outcome, stdout, elapsedMs } = await sh('setsid sh -c \'echo $$ > "$DIR/daemon.pid"; exec sleep 600\' & while [ ! -s "$DIR/daemon.pid" ]; do :; done; echo started; exit 3', { drainGraceMs: 300 });
    escaped.push(pidIn('daemon.pid'));
    expect(outcome).toMatchObject({ code: 3, timedOut: false, outputHeldOpen: true });
    expect(stdout).toEqual(['started']);
    expect(elapsedMs).toBeLessThan(5000);
    // It escaped the group, so it still runs: teardown finds it by the run's HOME (driver/leftovers.ts).
    expect(await processRunning(pidIn('daemon.pid'))).toBe(true);
  });

  it('finding 4: the deadline holds against a child that ignores SIGTERM and an escaped process holding the pipes', async () => {
    const deadline = Date.now() + 1000;
    const { outcome, finishedAt } = await sh(
      'setsid sh -c \'echo $$ > "$DIR/holder.pid"; trap "" TERM; exec sleep 600\' & trap "" TERM; echo waiting; while :; do sleep 1; done',
      { deadline, killGraceMs: 500, drainGraceMs: 300 },
    );
    escaped.push(pidIn('holder.pid'));
    expect(outcome).toMatchObject({ timedOut: true, cancelled: false, code: null, signal: 'SIGKILL', outputHeldOpen: true });
    // deadline + kill grace + the short wait for the kill's exit status, with room for a loaded machine.
    expect(finishedAt - deadline).toBeLessThan(500 + 250 + 1500);
  });

  it('an ordinary exit resolves as soon as the output has closed, with every line', async () => {
    const { outcome, stdout, stderr, elapsedMs } = await sh('i=0; while [ $i -lt 1000 ]; do echo "line $i"; i=$((i+1)); done; echo oops >&2', { drainGraceMs: 60_000 });
    expect(outcome).toMatchObject({ code: 0, outputHeldOpen: false });
    expect(stdout).toHaveLength(1000);
    expect(stdout.at(-1)).toBe('line 999');
    expect(stderr).toEqual(['oops']);
    expect(elapsedMs).toBeLessThan(30_000); // not the drain grace: the pipes closed with the child
  });

  it('a command that cannot start is a spawn error, not a hang', async () => {
    const outcome = await runProcess({ argv: [join(dir, 'no-such-binary')], cwd: dir, env: {}, user: {} });
    expect(outcome.code).toBeNull();
    expect(outcome.spawnError?.message).toContain('ENOENT');
  });

  it('cancellation terminates the group', async () => {
    const abort = new AbortController();
    const running = sh('echo $$ > "$DIR/cancel.pid"; echo up; sleep 600', { signal: abort.signal, onStdout: () => abort.abort() });
    const { outcome } = await running;
    expect(outcome).toMatchObject({ cancelled: true, timedOut: false, signal: 'SIGTERM' });
    await gone(pidIn('cancel.pid'));
  });
});
