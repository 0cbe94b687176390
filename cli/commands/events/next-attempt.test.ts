// `tcab events follow` as a process against a real nats-server, after an attempt that failed on infrastructure with
// attempts left: no next attempt within --next-attempt-timeout ends it with a line saying so and the last result's
// exit status; a next attempt that begins in time is followed to its result. Hostile flag values are refused.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFUSING_PORT } from '../../../test/support/nats-server.ts';
import { attemptStreamPerFile } from '../../../test/support/run-attempts.ts';
import { DEFAULT_NEXT_ATTEMPT_SECONDS, nextAttemptWithinMs } from '../next-attempt-option.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const perFile = attemptStreamPerFile();

interface Cli {
  child: ChildProcess;
  lines: string[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first stdout line `match` accepts (rejects if the process exits first). */
  line: (match: (line: string) => boolean) => Promise<string>;
}

function startCli(args: string[]): Cli {
  const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiting: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stdoutDone = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      lines.push(line);
      for (const w of waiting.filter((w) => w.match(line))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(line);
      }
    }
  })();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))).then(async (code) => (await stdoutDone, code));
  const line = (match: (line: string) => boolean) => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return Promise.race([
      new Promise<string>((resolve) => waiting.push({ match, resolve })),
      exited.then((code) => Promise.reject(new Error(`tcab exited (${code}) first; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`))),
    ]);
  };
  return { child, lines, stderr: () => stderr, exited, line };
}

const summary = (lines: string[]) =>
  lines.map((l) => {
    const o = JSON.parse(l) as { type: string; message?: string; outcome?: string; attempt?: { number: number } };
    return o.type === 'result' ? `result ${o.outcome} ${o.attempt?.number}` : o.message;
  });

describe('tcab events follow --next-attempt-timeout', () => {
  it('no attempt after a retryable attempt 1 of 3 within the bound: a line on stderr (--json), the last result\'s status', async () => {
    const runId = 'ns_follow-no-next';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', perFile.server().url, '--next-attempt-timeout', '1']);
    expect(await cli.exited).toBe(3);
    expect(summary(cli.lines)).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1']);
    expect(cli.stderr()).toBe(`tcab: run ${runId}: no attempt after attempt 1 of 3 within 1 s; the last result stands\n`);
  });

  it('in the human view the line follows the result on stdout', async () => {
    const runId = 'ns_follow-no-next-pretty';
    await perFile.publisher().attempt(runId, 2, 5, 'infrastructure_failed', true);
    const cli = startCli(['events', 'follow', runId, '--pretty', '--nats', perFile.server().url, '--next-attempt-timeout', '1']);
    expect(await cli.exited).toBe(3);
    expect(cli.lines.slice(-2)).toEqual(['attempt 2 of 5 failed on infrastructure; the Run tries again', 'no attempt after attempt 2 of 5 within 1 s; the last result stands']);
    expect(cli.stderr()).toBe('');
  });

  it('attempt 2 begins within the bound: follow goes on to its result and exits with its outcome', async () => {
    const runId = 'ns_follow-next-in-time';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', perFile.server().url, '--next-attempt-timeout', '30']);
    await cli.line((l) => l.includes('"infrastructure_failed"'));
    expect(cli.child.exitCode).toBeNull();
    await perFile.publisher().event(runId, 2, 1);
    await cli.line((l) => l.includes('attempt 2 event 1'));
    await perFile.publisher().event(runId, 2, 2);
    await perFile.publisher().result(runId, 2, 3, 'succeeded', false);
    expect(await cli.exited).toBe(0);
    expect(summary(cli.lines)).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1', 'attempt 2 event 1', 'attempt 2 event 2', 'result succeeded 2']);
    expect(cli.stderr()).toBe('');
  });

  it('interrupted while waiting for the next attempt: cancelled (130), not the earlier attempt\'s status', async () => {
    const runId = 'ns_follow-next-interrupted';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', perFile.server().url]);
    await cli.line((l) => l.includes('"infrastructure_failed"'));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(130);
  });

  it.each(['-1', 'abc', '99999999999999999999'])('refuses %j naming the flag, before connecting (exit 2)', async (value) => {
    for (const command of [['events', 'follow'], ['export', 'atif']]) {
      const cli = startCli([...command, 'ns_any', '--nats', `nats://127.0.0.1:${REFUSING_PORT}`, '--next-attempt-timeout', value]);
      expect(await cli.exited).toBe(2);
      expect(cli.stderr()).toBe(`tcab: --next-attempt-timeout: must be a whole number of seconds from 1 to 86400, got ${JSON.stringify(value)}\n`);
    }
  });

  it('help names the flag, its default and why', async () => {
    const cli = startCli(['events', 'follow', '--help']);
    expect(await cli.exited).toBe(0);
    const help = cli.lines.join(' ').replace(/\s+/g, ' ');
    expect(help).toContain('--next-attempt-timeout <seconds>');
    expect(help).toContain('backoffMaxSeconds 300 s) plus a Pod\'s start');
    expect(help).toContain(`(default: "${DEFAULT_NEXT_ATTEMPT_SECONDS}")`);
  });
});

describe('nextAttemptWithinMs', () => {
  it.each([
    ['1', 1000],
    ['600', 600_000],
    [' 42 ', 42_000],
    ['86400', 86_400_000],
  ])('%j is %d ms', (value, ms) => expect(nextAttemptWithinMs(value)).toBe(ms));

  it.each(['', ' ', '-5', '+5', '0', '00', '86401', '1e2', '0x10', '1.0', 'Infinity', 'NaN', '5s', '9'.repeat(400), '1\n2', '\u001b[31m5'])('refuses %j', (value) => {
    expect(() => nextAttemptWithinMs(value)).toThrow(/^--next-attempt-timeout: must be a whole number of seconds from 1 to 86400, got "/);
  });
});
