// What every stage of one run shares: the emitter (which scrubs and sequences), the run's directories and user,
// its deadline and cancellation signal, and the base environment handed to child processes.
import type { HarnessEvent, SystemStage } from '../../shared/events.ts';
import type { Clock } from '../../shared/translate/session.ts';
import type { RunDirs } from '../run-dirs.ts';
import type { RunUser } from '../process.ts';
import type { Timers } from './stderr-flush.ts';

export interface StageTimingRecord {
  stage: string;
  status: 'completed' | 'failed';
  duration_ms: number;
}

export interface StageContext {
  runId: string;
  dirs: RunDirs;
  user: RunUser;
  deadline: number;
  signal: AbortSignal;
  clock: Clock;
  /** PATH + locale + HOME: the minimal environment every child starts from. */
  baseEnv: Record<string, string>;
  npmRegistry: string;
  /** The npm registry's credential (`_auth`), held by the driver for the install stages only (npm-auth.ts). */
  npmAuth?: string;
  /** Where installed releases are kept between runs (stages/release-store.ts); absent: every run installs. */
  releaseStore?: string;
  emit(event: HarnessEvent): void;
  timings: StageTimingRecord[];
  /** Timers for the session's stderr quiet gap (stages/stderr-flush.ts); the system's when absent. */
  timers?: Timers;
}

/**
 * Where a run failed, as its error event's code says (`<stage>_failed`): a system stage, `auth` (resolving or
 * materialising credentials), `session` (driving the harness), or `driver` (the driver's own work between them,
 * e.g. creating the run's directories or loading the adapter): never a stage that was not running.
 */
export type FailedStage = SystemStage | 'auth' | 'session' | 'driver';

/** A stage failure that ends the run before (or instead of) a session. */
export class StageFailure extends Error {
  override name = 'StageFailure';
  readonly stage: FailedStage;
  readonly kind: 'infrastructure' | 'timeout' | 'cancelled';
  /** An infrastructure failure another attempt may not meet (the registry or the network failed: stages/transient.ts). */
  readonly transient: boolean;
  constructor(stage: FailedStage, kind: 'infrastructure' | 'timeout' | 'cancelled', message: string, options?: ErrorOptions & { transient?: boolean }) {
    super(message, options);
    this.stage = stage;
    this.kind = kind;
    this.transient = options?.transient === true;
  }
}

/** Brackets a stage with system started/completed|failed events and records its duration. */
export async function stage<T>(ctx: StageContext, name: SystemStage, startMessage: string, body: () => Promise<{ value: T; message: string }>): Promise<T> {
  const started = Date.now();
  ctx.emit({ type: 'system', timestamp: ctx.clock.now().toISOString(), stage: name, status: 'started', message: startMessage });
  try {
    const { value, message } = await body();
    ctx.timings.push({ stage: name, status: 'completed', duration_ms: Date.now() - started });
    ctx.emit({ type: 'system', timestamp: ctx.clock.now().toISOString(), stage: name, status: 'completed', message });
    return value;
  } catch (error) {
    ctx.timings.push({ stage: name, status: 'failed', duration_ms: Date.now() - started });
    ctx.emit({ type: 'system', timestamp: ctx.clock.now().toISOString(), stage: name, status: 'failed', message: (error as Error).message });
    throw asStageFailure(error, name);
  }
}

/** The error as a StageFailure of `stage` (a StageFailure already knows its own stage and is kept). */
export function asStageFailure(error: unknown, stage: FailedStage): StageFailure {
  if (error instanceof StageFailure) return error;
  return new StageFailure(stage, 'infrastructure', error instanceof Error ? error.message : String(error), { cause: error });
}

/** Keeps the last lines a child printed, for failure messages that show the tool's own words. */
export class OutputTail {
  private lines: string[] = [];
  private readonly max: number;
  constructor(max = 20) {
    this.max = max;
  }
  add = (line: { text: string }): void => {
    this.lines.push(line.text);
    if (this.lines.length > this.max) this.lines.shift();
  };
  text(): string {
    return this.lines.join('\n').trim();
  }
}
