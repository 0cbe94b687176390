// What the dispatcher remembers about a Run beyond its informer caches, in one place, keyed by the Run's key
// (`<namespace>/<name>`) and tied to its uid (a Run re-created under its name starts afresh). Each entry goes when
// the Run is deleted or is final with its Pod gone (run-reconciler.ts), so a long-lived leader holds memory only for
// Runs still in play: `size` is what the pruning tests watch.
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { Clock } from './work-queue.ts';
import type { Disruption } from '../status/pod-disruption.ts';

export interface RunMemo {
  uid: string;
  /** This dispatcher created the Run's Pod and its Pod cache has not shown it yet. */
  claimed?: { pod: string; eventsSubject: string; at: string };
  /** The last status this dispatcher wrote, until the Run cache shows it (`baseRv`: the version it replaced). */
  lastWrite?: { baseRv: string | undefined; rv: string | undefined; status: RunStatus };
  /** Phases already recorded as Kubernetes Events on the Run (once per transition; a few, so a list). */
  recorded?: string[];
  /** Kubelet Events (by uid) already published as system events. */
  seenEvents?: Set<string>;
  /** When this dispatcher first saw the driver exit (ms): the result's grace period runs from here. */
  exitedAt?: number;
  /** The driver Pod's deletion this dispatcher asked for (teardown): when asked, and when the cache showed it gone. */
  teardown?: { pod: string; startedAt: string; goneAt?: string };
  /** How someone else stopped the Run's Pod (deleted, evicted, ...): ends the Run Failed, not Cancelled. */
  disruption?: Disruption;
}

export class RunMemory {
  private readonly byKey = new Map<string, RunMemo>();

  /** The Run's entry, if it has one for this uid (an entry of an earlier Run of the name is not its). */
  peek(key: string, uid?: string): RunMemo | undefined {
    const memo = this.byKey.get(key);
    return memo && (uid === undefined || memo.uid === uid) ? memo : undefined;
  }

  /** The Run's entry, made (or remade, for a new uid under the name) on first write. */
  entry(key: string, uid: string): RunMemo {
    const memo = this.byKey.get(key);
    if (memo && memo.uid === uid) return memo;
    const fresh: RunMemo = { uid };
    this.byKey.set(key, fresh);
    return fresh;
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }

  get size(): number {
    return this.byKey.size;
  }
}

interface PendingResult {
  result: RunResult;
  ack: () => void;
  since: number;
}

/** A result for a Run this dispatcher never sees (another namespace's, a workstation run's) is let go after this. */
export const UNKNOWN_RESULT_HOLD_MS = 120_000;

/**
 * Driver results from the NATS consumer, by run id, until the Run's status carries them (then acked). A result for a
 * run id of no Run here is held UNKNOWN_RESULT_HOLD_MS (the Run may be on its way through the cache), then acked.
 */
export class ResultInbox {
  private readonly byRunId = new Map<string, PendingResult>();
  private readonly clock: Clock;
  private readonly timers = new Map<string, unknown>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  put(runId: string, result: RunResult, ack: () => void, foreign: boolean): void {
    this.byRunId.set(runId, { result, ack, since: this.clock.now() });
    if (!foreign || this.timers.has(runId)) return;
    this.timers.set(runId, this.clock.setTimeout(() => {
      this.timers.delete(runId);
      this.settle(runId);
    }, UNKNOWN_RESULT_HOLD_MS));
  }

  get(runId: string): PendingResult | undefined {
    return this.byRunId.get(runId);
  }

  /** Acks and drops the run id's result (written, or let go). */
  settle(runId: string): void {
    const pending = this.byRunId.get(runId);
    this.byRunId.delete(runId);
    pending?.ack();
  }

  /** Milliseconds until a result of a run id with no Run is let go (0: now). */
  holdLeft(runId: string): number {
    const pending = this.byRunId.get(runId);
    return pending ? Math.max(0, pending.since + UNKNOWN_RESULT_HOLD_MS - this.clock.now()) : 0;
  }

  get size(): number {
    return this.byRunId.size;
  }

  runIds(): string[] {
    return [...this.byRunId.keys()];
  }

  clear(): void {
    for (const handle of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
  }
}
