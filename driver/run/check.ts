// The test case's check (issue 39): after the last session, once every process of the agent is gone, the check's
// files are written into the workspace over whatever the agent left at those paths, and its command runs there as
// the run user. Exit 0 within its timeout = passed; a reward is what it wrote to $TCAB_REWARD_FILE, else null. The
// agent can edit or delete test files in its workspace; the shipped ones are what is run.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Outcome, RunAttemptNumber, TestCaseCheck } from '../../shared/run.ts';
import { ConfinementError, HeldDir, openRegularFileIn, restoreConfinedFile } from '../confined-fs.ts';
import { killRunLeftovers } from '../leftovers.ts';
import { runProcess } from '../process.ts';
import type { ProcessOutcome } from '../process.ts';
import type { StageContext } from '../stages/context.ts';
import type { RunState } from './state.ts';
import type { FetchedCheckFiles } from './check-files.ts';

/** Outcomes after which the work is judged: the sessions ran (a failed or timed-out agent may still have solved it). */
const JUDGED: ReadonlySet<Outcome> = new Set(['succeeded', 'harness_failed', 'timed_out']);

/** The most of the check's output the result keeps (its end: where test runners print their summary). */
export const CHECK_OUTPUT_TAIL_CHARS = 4000;

/** A reward file longer than this is not a number. */
const REWARD_MAX_BYTES = 64;

/**
 * Runs the test case's check when the run's outcome is one that is judged; sets run.check (null: not run). As it
 * starts, the run's progress says so (the Run's phase Checking; a line of `tcab run`). `attempt`: a cluster Run's.
 */
export async function checkWorkspace(run: RunState, ctx: StageContext, check: TestCaseCheck, attempt?: RunAttemptNumber, fetched?: FetchedCheckFiles): Promise<void> {
  run.check = null;
  if (!JUDGED.has(run.outcome) || run.sessions.length === 0) return;
  // Nothing of the agent may run on while its work is judged (a daemon rewriting the test files).
  await killRunLeftovers(ctx.dirs.home, ctx.user);
  const rewardDir = await freshRewardDir(ctx);
  const shipped = await shipCheckFiles(ctx, [...(fetched?.files ?? []), ...(check.files ?? [])]);
  if (shipped !== undefined) {
    run.check = { passed: false, exit_code: null, reward: null, duration_ms: 0, output_tail: shipped };
    return;
  }
  const output = new OutputEnd(CHECK_OUTPUT_TAIL_CHARS);
  run.progress({ phase: 'Checking', at: run.now(), ...(attempt ? { attempt } : {}), command: check.command.split('\n', 1)[0]! });
  const outcome = await runProcess({
    argv: ['/bin/sh', '-c', check.command],
    cwd: ctx.dirs.workspace,
    env: { ...ctx.baseEnv, TCAB_REWARD_FILE: join(rewardDir, 'reward') },
    user: ctx.user,
    deadline: Date.now() + check.timeoutSeconds * 1000,
    signal: ctx.signal,
    maxLineBytes: 64 * 1024,
    onStdout: output.add,
    onStderr: output.add,
  });
  if (outcome.cancelled) {
    run.outcome = 'cancelled';
    run.message = 'cancelled during the check';
    return;
  }
  const reward = await readReward(rewardDir, (message) => run.emit({ type: 'warning', timestamp: run.now(), message, code: 'check_reward_invalid' }));
  run.check = { passed: outcome.code === 0 && !outcome.timedOut, exit_code: outcome.code, reward, duration_ms: outcome.durationMs, output_tail: output.text(checkEnding(outcome, check)) };
}

/** A directory of the run's own root, new (a random name nothing could have planted), for the check's reward. */
async function freshRewardDir(ctx: StageContext): Promise<string> {
  const name = `check-${randomBytes(6).toString('hex')}`;
  const root = await HeldDir.open(ctx.dirs.root, { follow: false });
  try {
    await (await root.sub(name, { mode: 0o700, owner: ctx.user })).close();
  } finally {
    await root.close();
  }
  return join(ctx.dirs.root, name);
}

/**
 * The check's files (those fetched from git, then the inline ones: an inline file wins), written over what the agent
 * left; a message when the agent's leftovers could not be cleared.
 */
async function shipCheckFiles(ctx: StageContext, files: readonly { path: string; content: string | Uint8Array; mode?: number }[]): Promise<string | undefined> {
  for (const file of files) {
    try {
      await restoreConfinedFile(ctx.dirs.workspace, file.path, file.content, { mode: file.mode ?? 0o644, dirMode: 0o755, owner: ctx.user });
    } catch (error) {
      if (!(error instanceof ConfinementError) && (error as NodeJS.ErrnoException).code === undefined) throw error;
      return `the check did not run: its file ${file.path} could not be written into the workspace (${(error as Error).message})`;
    }
  }
  return undefined;
}

/** The reward the check wrote: a number in [0, 1], else null (with a warning when it wrote something else). */
async function readReward(rewardDir: string, warn: (message: string) => void): Promise<number | null> {
  const dir = await HeldDir.open(rewardDir, { follow: false });
  try {
    const opened = await openRegularFileIn(dir, 'reward').catch(() => undefined);
    if (!opened) return null;
    try {
      const buffer = Buffer.alloc(REWARD_MAX_BYTES + 1);
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
      const text = buffer.subarray(0, bytesRead).toString('utf8').trim();
      const value = /^\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
      if (bytesRead <= REWARD_MAX_BYTES && value >= 0 && value <= 1) return value;
      warn(`check: the reward file held ${JSON.stringify(text.slice(0, 32))}${bytesRead > REWARD_MAX_BYTES ? '…' : ''}, not a number in [0, 1]; the reward is left out`);
      return null;
    } finally {
      await opened.handle.close();
    }
  } finally {
    await dir.close();
  }
}

/** What the tail ends with when the command did not simply exit: its timeout or why it could not start. */
function checkEnding(outcome: ProcessOutcome, check: TestCaseCheck): string | undefined {
  if (outcome.timedOut) return `[tcab: the check did not finish within ${check.timeoutSeconds}s and was killed]`;
  if (outcome.spawnError) return `[tcab: the check could not start: ${outcome.spawnError.message}]`;
  if (outcome.code === null) return `[tcab: the check was killed by ${outcome.signal}]`;
  return undefined;
}

/** The last `max` characters of a process's output lines (stdout and stderr as they came). */
class OutputEnd {
  private text_ = '';
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  add = (line: { text: string }): void => {
    this.text_ += `${line.text}\n`;
    if (this.text_.length > 2 * this.max) this.text_ = this.text_.slice(-this.max);
  };

  text(ending?: string): string {
    const all = ending === undefined ? this.text_ : `${this.text_}${ending}\n`;
    return all.slice(-this.max).trimEnd();
  }
}
