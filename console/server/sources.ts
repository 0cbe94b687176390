// What the console server reads, as interfaces it is given (issue 23): the dispatcher passes its own caches and NATS
// connection, `tcab console` builds them from a kubeconfig and a NATS URL, tests and the bench feed synthetic rows.
// The server keeps no Kubernetes object itself, only the rows it derives (shared/console.ts).
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';
import type { ConsoleStreamEvent } from '../../nats/console-reader.ts';
import type { HarnessRow, KubeEventRow, Readiness, ThrottleHoldRow } from '../../shared/console.ts';
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { EvaluationStatus } from '../../shared/evaluation/schema.ts';

export type Unsubscribe = () => void;

/**
 * A Run as the console reads it. A source may slim it (a list+watch transform keeping only these fields and the small
 * spec fields the row shows): the runs table never needs the prompt or the test case.
 */
export interface ConsoleRun {
  metadata: { namespace?: string; name?: string; uid?: string; creationTimestamp?: Date | string; deletionTimestamp?: Date | string; labels?: Record<string, string> };
  spec: { harness?: string; model?: string; cancel?: boolean } & Record<string, unknown>;
  status?: RunStatus;
}

export type RunChange = { type: 'upsert'; run: ConsoleRun } | { type: 'delete'; run: ConsoleRun };

/** Every Run (list + watch), e.g. the dispatcher's Run cache. */
export interface RunsSource {
  /** The Runs known now (after the initial list). */
  list(): Iterable<ConsoleRun>;
  /** Changes after subscribing; a relist reports what vanished as 'delete'. */
  subscribe(onChange: (change: RunChange) => void): Unsubscribe;
}

/**
 * An Evaluation as the console reads it (kube/resources.ts EvaluationObject fits): a source may slim it to this
 * (evaluation-row.ts slimEvaluation: the test cases' prompts and files are never needed).
 */
export interface ConsoleEvaluation {
  metadata: { namespace?: string; name?: string; uid?: string; creationTimestamp?: Date | string; generation?: number };
  spec: { matrix?: readonly { harness: string; models: readonly string[] }[]; testCases?: readonly unknown[]; testCasesFrom?: readonly unknown[]; repeats?: number };
  status?: EvaluationStatus;
}

export type EvaluationChange = { type: 'upsert'; evaluation: ConsoleEvaluation } | { type: 'delete'; evaluation: ConsoleEvaluation };

/** Every Evaluation (list + watch), e.g. the dispatcher's Evaluation cache. */
export interface EvaluationsSource {
  list(): Iterable<ConsoleEvaluation>;
  subscribe(onChange: (change: EvaluationChange) => void): Unsubscribe;
}

/** One Run, whole (spec with the prompt, status), live: for the run page. undefined = it does not exist (now). */
export interface RunDetailSource {
  watch(namespace: string, name: string, onChange: (run: ConsoleRun | undefined) => void): Unsubscribe;
}

/** Kubernetes Events about one Run and its driver Pod (list + watch, fieldSelector involvedObject.uid / name). */
export interface KubeEventsSource {
  watch(target: { namespace: string; runUid: string; pod?: string }, onChange: (items: KubeEventRow[]) => void): Unsubscribe;
}

/** The one write on a Run: spec.cancel = true (the dispatcher does the rest). */
export interface RunWriter {
  cancel(namespace: string, name: string): Promise<'cancelled' | 'not-found'>;
}

/** Harnesses the registry knows, with what their readiness is where the console runs. */
export interface HarnessCatalog {
  /** `key`: where its API key goes in api-key mode (shared/gateway-route.ts keyRoutesOf). */
  list(): readonly { slug: string; displayName?: string; key?: HarnessRow['key'] }[];
  readiness(slug: string): Readiness;
}

/** HarnessConfig objects by slug (absent = defaults), live. */
export interface HarnessConfigsSource {
  list(): ReadonlyMap<string, HarnessConfigSpec>;
  subscribe(onChange: () => void): Unsubscribe;
}

/** One event as JetStream delivered it: the shape nats/console-reader.ts reads (one definition, beside its reader). */
export type StreamedEvent = ConsoleStreamEvent;

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Activity of every run: ONE consumer on `tcab.run.*.event.>` that first delivers the last stored event of each
 * subject (so every live run has an activity at start) and then every new event.
 */
export interface ActivitySource {
  start(onEvents: (events: StreamedEvent[]) => void, onError: (error: Error) => void): Promise<Stoppable>;
}

export interface FeedHandlers {
  /** Events in stream order, batched as they arrived. */
  onEvents(events: StreamedEvent[]): void;
  onResult(seq: number, result: RunResult): void;
  /** The replay reached the messages stored when the feed opened (sent once). */
  onCaughtUp(): void;
  onError(error: Error): void;
}

/** One run's stream from the message after `afterSeq` (0 = from the first): replay, then live. */
export interface FeedSource {
  open(runId: string, afterSeq: number, handlers: FeedHandlers): Promise<Stoppable>;
}

/** Provider+models whose Runs the dispatcher holds (provider back-pressure), live. */
export interface ThrottleHoldsSource {
  list(): readonly ThrottleHoldRow[];
  /** Called when the holds changed (one began, was extended, ended). */
  subscribe(onChange: () => void): Unsubscribe;
}

export interface ConsoleSources {
  runs: RunsSource;
  runDetail: RunDetailSource;
  kubeEvents: KubeEventsSource;
  writer: RunWriter;
  harnesses: HarnessCatalog;
  configs: HarnessConfigsSource;
  /** Absent: no model gateway is read (`tcab console` on a workstation, an install without one): no holds shown. */
  throttles?: ThrottleHoldsSource;
  /** Absent: Evaluations are not read here (the Evaluations page says they are not available). */
  evaluations?: EvaluationsSource;
  /** Absent: the console runs without NATS (no activity, no feed; the page says so). */
  activity?: ActivitySource;
  feed?: FeedSource;
}
