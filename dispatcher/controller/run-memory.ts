// What the dispatcher remembers about a Run beyond its informer caches, in one place, keyed by the Run's key
// (`<namespace>/<name>`) and tied to its uid (a Run re-created under its name starts afresh). Each entry goes when
// the Run is deleted or is final with its Pod gone (run-reconciler.ts), so a long-lived leader holds memory only for
// Runs still in play: `size` is what the pruning tests watch.
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { RunEgress } from '../../shared/egress.ts';
import type { Clock } from './work-queue.ts';
import type { Disruption } from '../status/pod-disruption.ts';

export interface RunMemo {
  uid: string;
  /** This dispatcher created the Run's Pod and its Pod cache has not shown it yet. */
  claimed?: { pod: string; eventsSubject: string; egress?: RunEgress; at: string };
  /** The last status this dispatcher wrote, until the Run cache shows it (`baseRv`: the version it replaced). */
  lastWrite?: { baseRv: string | undefined; rv: string | undefined; status: RunStatus };
  /** Phases already recorded as Kubernetes Events on the Run (once per transition; a few, so a list). */
  recorded?: string[];
  /** Kubelet Events (by uid) already published as system events. */
  seenEvents?: Set<string>;
  /** When this dispatcher first saw the driver exit (ms): the result's grace period runs from here. */
  exitedAt?: number;
  /** Reads of the run stream for that result that failed (NATS not answering): each waits another grace. */
  resultLookups?: number;
  /** The driver Pod's deletion this dispatcher asked for (teardown): when asked, and when the cache showed it gone. */
  teardown?: { pod: string; startedAt: string; goneAt?: string };
  /** How someone else stopped the Run's Pod (deleted, evicted, ...): ends the Run Failed, not Cancelled. */
  disruption?: Disruption;
  /** The run's NATS user this dispatcher minted (auth/run-credentials.ts): what its revocation names. */
  natsUser?: { publicKey: string; expiresAt?: Date };
  /** The run's NATS user was revoked (or the revocation is under way): not again. */
  natsRetired?: boolean;
  /** A gateway token of this Run exists (auth/gateway-tokens.ts): its revocation is owed when the Run ends. */
  gatewayToken?: boolean;
  /** The run's gateway token was revoked (or the revocation is under way): not again. */
  gatewayRetired?: boolean;
  /** When this dispatcher first saw the attempt's image failing to pull (ms): the pull grace runs from here. */
  pullFailingSince?: number;
  /** The driver said the test case's check started (its progress message): on which attempt, and when. */
  checking?: { attempt: number; at: string };
}

/**
 * The current attempt is over and another follows: what this dispatcher noted about the old one's Pod, credentials
 * and token is dropped (their revocations are already under way), so the next attempt starts clean.
 */
export function startNextAttempt(memo: RunMemo): void {
  for (const field of ['claimed', 'exitedAt', 'resultLookups', 'teardown', 'disruption', 'natsUser', 'natsRetired', 'gatewayToken', 'gatewayRetired', 'pullFailingSince', 'checking'] as const) delete memo[field];
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
 * A run id's results wait in arrival order and are settled one at a time from the first: the first result wins
 * (status/first-result.ts), so a second one arriving before the first is written must not take its place.
 */
export class ResultInbox {
  private readonly byRunId = new Map<string, PendingResult[]>();
  private readonly clock: Clock;
  private readonly timers = new Map<string, unknown>();
  private count = 0;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  put(runId: string, result: RunResult, ack: () => void, foreign: boolean): void {
    const waiting = this.byRunId.get(runId);
    const pending = { result, ack, since: this.clock.now() };
    if (waiting) waiting.push(pending);
    else this.byRunId.set(runId, [pending]);
    this.count += 1;
    if (!foreign || this.timers.has(runId)) return;
    this.timers.set(runId, this.clock.setTimeout(() => {
      this.timers.delete(runId);
      this.letGo(runId);
    }, UNKNOWN_RESULT_HOLD_MS));
  }

  /** The run id's first result still waiting. */
  get(runId: string): PendingResult | undefined {
    return this.byRunId.get(runId)?.[0];
  }

  /** Acks and drops the run id's first waiting result (written, refused, or let go). */
  settle(runId: string): void {
    const waiting = this.byRunId.get(runId);
    const pending = waiting?.shift();
    if (!pending) return;
    this.count -= 1;
    if (waiting!.length === 0) this.byRunId.delete(runId);
    pending.ack();
  }

  /** Acks and drops every result of the run id (no Run for it). */
  letGo(runId: string): void {
    while (this.get(runId)) this.settle(runId);
  }

  /** Milliseconds until the results of a run id with no Run are let go (0: now). */
  holdLeft(runId: string): number {
    const pending = this.get(runId);
    return pending ? Math.max(0, pending.since + UNKNOWN_RESULT_HOLD_MS - this.clock.now()) : 0;
  }

  /** Results waiting, all run ids together. */
  get size(): number {
    return this.count;
  }

  runIds(): string[] {
    return [...this.byRunId.keys()];
  }

  clear(): void {
    for (const handle of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
  }
}
