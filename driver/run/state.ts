// What one run has learned so far, in one record the steps of executeRun read and write (driver/run.ts): the
// events' single exit (`emit`: scrubbed, numbered), the run's clock, deadline and cancel, and what the result is
// made of. A step that fails throws; which stage was running says where an unexpected error belongs.
import type { HarnessEvent } from '../../shared/events.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import type { CheckResult, Outcome, RunSpec, SessionRecord } from '../../shared/run.ts';
import type { Clock } from '../../shared/translate/session.ts';
import { systemClock } from '../../shared/translate/session.ts';
import type { BudgetExceeded, WireAccount } from '../../shared/gateway.ts';
import { SecretScrubber } from '../scrub.ts';
import { proxySecrets } from '../child-env.ts';
import { npmAuthSecrets } from '../stages/npm-auth.ts';
import type { FailedStage, StageContext, StageTimingRecord } from '../stages/context.ts';
import type { HeldLogin } from '../login-lock.ts';
import type { HostedGateway } from '../gateway-host.ts';
import type { EventSink } from '../sinks/sink.ts';
import type { RunProgress } from '../../shared/run-progress.ts';
import type { FetchedCheckFiles } from './check-files.ts';

/** What of the caller's options the run's record is made from. */
export interface RunStateOptions {
  runId: string;
  env: Readonly<Record<string, string | undefined>>;
  sinks: EventSink[];
  clock?: Clock;
  signal?: AbortSignal;
  secrets?: string[];
  npmAuth?: string;
}

export interface RunState {
  readonly runId: string;
  readonly clock: Clock;
  readonly startedAt: Date;
  readonly scrubber: SecretScrubber;
  /** The single exit of every event: scrubbed, numbered, to every sink. */
  readonly emit: (event: HarnessEvent) => void;
  /** Where the run is between events (the check has started), scrubbed, to every sink that takes it. */
  readonly progress: (progress: RunProgress) => void;
  readonly now: () => string;
  readonly timings: StageTimingRecord[];
  /** Absolute: the run's maximum runtime from its start. */
  readonly deadline: number;
  /** The caller's cancel, and the gateway's "budget reached": either stops the harness's process group. */
  readonly abort: AbortController;
  /** Events emitted so far. */
  seq: number;
  /** What is running now, so an unexpected error is reported against it (stages report their own failures). */
  running: FailedStage;
  manifest?: HarnessManifest;
  usageScope: 'session' | 'thread';
  harnessVersion: string | null;
  authMode: 'api-key' | 'subscription' | null;
  sessions: SessionRecord[];
  rawUsage: unknown[];
  outcome: Outcome;
  message: string;
  retryable: boolean;
  ctx?: StageContext;
  login?: HeldLogin;
  hosted?: HostedGateway;
  budgetHit?: BudgetExceeded;
  wire: WireAccount | null;
  /** The test case's check: undefined when it has none, null when it did not run (driver/run/check.ts). */
  check?: CheckResult | null;
  /** The check's files fetched from git before the sessions (check-files.ts): kept here, out of the agent's reach. */
  checkFiles?: FetchedCheckFiles;
}

export function openRunState(spec: RunSpec, options: RunStateOptions): RunState {
  const clock = options.clock ?? systemClock;
  const scrubber = new SecretScrubber();
  scrubber.add(...(options.secrets ?? []), ...proxySecrets(options.env), ...npmAuthSecrets(options.npmAuth));
  const abort = new AbortController();
  if (options.signal?.aborted) abort.abort(options.signal.reason);
  else options.signal?.addEventListener('abort', () => abort.abort(options.signal!.reason), { once: true });
  const state: RunState = {
    runId: options.runId,
    clock,
    startedAt: clock.now(),
    scrubber,
    emit: (event) => {
      const clean = scrubber.event(event, () => clock.now().toISOString());
      state.seq += 1;
      for (const sink of options.sinks) sink.event({ runId: options.runId, seq: state.seq, event: clean });
    },
    progress: (progress) => {
      // Scrubbed, then cut to the schema's 200 characters (a redaction may be longer than what it hides).
      const clean = progress.command === undefined ? progress : { ...progress, command: cutTo(scrubber.text(progress.command), 200) };
      for (const sink of options.sinks) sink.progress?.(options.runId, clean);
    },
    now: () => clock.now().toISOString(),
    timings: [],
    deadline: Date.now() + spec.maxRuntimeSeconds * 1000,
    abort,
    seq: 0,
    running: 'driver',
    usageScope: 'session',
    harnessVersion: null,
    authMode: null,
    sessions: [],
    rawUsage: [],
    outcome: 'succeeded',
    message: '',
    retryable: false,
    wire: null,
  };
  return state;
}

/** At most `max` characters, an ellipsis marking a cut. */
function cutTo(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
