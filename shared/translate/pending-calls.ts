// Pairs tool calls with their results by id without ever losing one (issue 19, finding 9). Harness streams are
// not always well-formed: an id can be reused while its first call is still open, and a result can arrive before
// the call it answers. Nothing a harness reports may vanish and nothing is reported twice, so:
// - a call whose id is still pending displaces the pending call, which the caller reports without an outcome;
// - a result with no pending call is held, and paired exactly once with the call that later claims its id;
// - at the end, the calls never answered and the results never claimed are handed back to be reported;
// - the calls answered last are remembered (a bounded number), so a call printed again after its result can be
//   recognised instead of being opened, and reported, a second time.
// Pure bookkeeping: the adapter decides what each displaced, paired or leftover item becomes; `flush` is the end
// of the stream every translator shares (calls without an outcome, results as `unknown`).
import type { DraftEvent } from '../events.ts';
import { unknownValue } from './best-effort.ts';

/** How many answered calls are remembered: repeats come right after the original, and memory stays bounded. */
const REMEMBERED_ANSWERS = 1024;

export class PendingCalls<Call, Result> {
  private readonly calls = new Map<string, Call>();
  private readonly early = new Map<string, Result>();
  /** Answered calls by id, with the ring slot of their latest answer. */
  private readonly answered = new Map<string, { call: Call; slot: number }>();
  /** The ids of the latest answers, oldest overwritten first: O(1) per answer, no iterator or rehash per call. */
  private readonly answerRing: (string | undefined)[];
  private nextSlot = 0;

  /**
   * `rememberAnswers`: how many answered calls `answeredCall` can recognise (0 for an adapter that never asks:
   * nothing is held past its answer).
   */
  constructor(options: { rememberAnswers?: number } = {}) {
    this.answerRing = new Array<string | undefined>(options.rememberAnswers ?? REMEMBERED_ANSWERS).fill(undefined);
  }

  /**
   * A call opens. `displaced` is the call that was pending under the same id (report it now, without outcome);
   * `result` is a result that arrived before this call (pair them now: the call is then closed).
   */
  open(id: string, call: Call): { displaced?: Call; result?: Result } {
    const displaced = this.calls.get(id);
    this.calls.delete(id);
    const result = this.early.get(id);
    if (result !== undefined) {
      this.early.delete(id);
      this.remember(id, call);
      return displaced === undefined ? { result } : { displaced, result };
    }
    this.calls.set(id, call);
    return displaced === undefined ? {} : { displaced };
  }

  /** Replaces a pending call's state (a progress update of the same call); false when no call is pending. */
  update(id: string, call: Call): boolean {
    if (!this.calls.has(id)) return false;
    this.calls.set(id, call);
    return true;
  }

  pending(id: string): Call | undefined {
    return this.calls.get(id);
  }

  /**
   * A result arrives. `call` is the pending call it closes; without one the result is held for a later call, and
   * `displaced` is an earlier held result with the same id (report it now, unpaired).
   */
  close(id: string, result: Result): { call?: Call; displaced?: Result } {
    const call = this.calls.get(id);
    if (call !== undefined) {
      this.calls.delete(id);
      this.remember(id, call);
      return { call };
    }
    const displaced = this.early.get(id);
    this.early.set(id, result);
    return displaced === undefined ? {} : { displaced };
  }

  /** The call last answered under `id`, while it is among the most recent answers. */
  answeredCall(id: string): Call | undefined {
    return this.answered.get(id)?.call;
  }

  private remember(id: string, call: Call): void {
    if (this.answerRing.length === 0) return;
    const slot = this.nextSlot;
    const evicted = this.answerRing[slot];
    // The id leaving the ring is forgotten unless a later answer under it holds another slot.
    if (evicted !== undefined && this.answered.get(evicted)?.slot === slot) this.answered.delete(evicted);
    this.answerRing[slot] = id;
    this.answered.set(id, { call, slot });
    this.nextSlot = (slot + 1) % this.answerRing.length;
  }

  /**
   * End of the stream, reported: each call never answered through `unanswered` (its event without an outcome, or
   * nothing when other records already reported it), then each result no call claimed as `unknown` carrying its
   * raw record (`raw`). Pushed onto `out`; both maps are emptied.
   */
  flush(out: DraftEvent[], unanswered: (call: Call, out: DraftEvent[]) => void, raw: (result: Result) => unknown): DraftEvent[] {
    const { calls, results } = this.drain();
    for (const call of calls) unanswered(call, out);
    for (const result of results) out.push(unknownValue(raw(result)));
    return out;
  }

  /** End of the stream: calls never answered and results never claimed, in arrival order; both maps are emptied. */
  drain(): { calls: Call[]; results: Result[] } {
    const out = { calls: [...this.calls.values()], results: [...this.early.values()] };
    this.calls.clear();
    this.early.clear();
    return out;
  }
}
