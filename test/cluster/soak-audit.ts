// What a chaos soak checks once every Run is final (issue 35): every attempt before the last was an infrastructure
// failure of a retried class, marked retried; a Run that did not succeed says its attempts are used up; per attempt,
// events numbered 1..n without a gap and at most one result; a Succeeded Run's usage is its last attempt's result's.
// Shared by the one-node soak (chaos-soak.test.ts) and the three-node one (multi-node.test.ts).
import { expect } from 'vitest';
import type { RunObject } from '../../kube/resources.ts';
import { RETRYABLE_REASONS } from '../../dispatcher/status/retry.ts';
import { readRunStream } from '../../nats/reader.ts';
import type { StreamItem } from '../../nats/reader.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import type { RunResult } from '../../shared/run.ts';

/** A run's stream from its first message until `done`, or what was there when `ms` ran out. */
export type ReadRun = (runId: string, done: (items: StreamItem[]) => boolean, ms: number) => Promise<StreamItem[]>;

/** ReadRun over NATS (replayed from the first message; stops at `done` or when `ms` runs out, an attempt may end without a result). */
export function runReader(settings: NatsSettings | (() => NatsSettings)): ReadRun {
  return async (runId, done, ms) => {
    const items: StreamItem[] = [];
    const signal = AbortSignal.timeout(ms);
    try {
      for await (const item of readRunStream({ settings: typeof settings === 'function' ? settings() : settings, runId, replay: true, untilResult: false, signal })) {
        items.push(item);
        if (done(items)) break;
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    return items;
  };
}

export interface SoakAudit {
  attempts: number;
  retried: number;
  /** Retried attempts by reason (NodeLost, PodEvicted, ...). */
  retriedBy: Record<string, number>;
  exhausted: string[];
  eventsRead: number;
  /** Attempts whose events were not 1..n (an event lost). */
  gaps: number;
  duplicateResults: number;
}

export async function auditSoak(done: RunObject[], namespace: string, readRun: ReadRun, attemptsAllowed: number): Promise<SoakAudit> {
  const audit: SoakAudit = { attempts: 0, retried: 0, retriedBy: {}, exhausted: [], eventsRead: 0, gaps: 0, duplicateResults: 0 };
  for (const run of done) {
    const status = run.status!;
    const name = run.metadata!.name!;
    const attempts = status.attempts ?? [];
    audit.attempts += attempts.length;
    // Every attempt before the last was an infrastructure failure that was retried, of a class that is retried.
    for (const a of attempts.slice(0, -1)) {
      expect(a, name).toMatchObject({ outcome: 'infrastructure_failed', retried: true });
      expect(RETRYABLE_REASONS, `${name}: ${a.reason}`).toContain(a.reason);
      audit.retried += 1;
      audit.retriedBy[a.reason!] = (audit.retriedBy[a.reason!] ?? 0) + 1;
    }
    if (status.phase !== 'Succeeded') {
      // Only a Run whose attempts are used up (or that had none of its own to blame) may fail, and it says why.
      expect(status.conditions, `${name}: ${status.message}`).toContainEqual(expect.objectContaining({ type: 'Retrying', reason: 'NotRetried' }));
      audit.exhausted.push(name);
    }
    // The stream: per attempt, events 1..n without a gap, and at most one result (exactly one when it ended with one).
    const items = await readRun(`${namespace}_${name}`, (all) => all.some((i) => i.kind === 'result' && i.result.attempt?.number === attempts.length), status.phase === 'Succeeded' ? 60_000 : 5_000);
    const results = new Map<number, RunResult[]>();
    const seqs = new Map<number, number[]>();
    for (const item of items) {
      if (item.kind === 'result') results.set(item.result.attempt?.number ?? 1, [...(results.get(item.result.attempt?.number ?? 1) ?? []), item.result]);
      if (item.kind === 'event' && item.seq > 0) seqs.set(item.attempt ?? 1, [...(seqs.get(item.attempt ?? 1) ?? []), item.seq]);
    }
    for (const list of results.values()) if (list.length > 1) audit.duplicateResults += list.length - 1;
    for (const [attempt, list] of seqs) {
      audit.eventsRead += list.length;
      const last = results.get(attempt)?.[0]?.event_count ?? Math.max(...list);
      if (JSON.stringify(list) !== JSON.stringify(Array.from({ length: last }, (_, i) => i + 1))) audit.gaps += 1;
    }
    if (status.phase === 'Succeeded') {
      const final = results.get(attempts.length)?.[0];
      // The last attempt's own result, which the status agrees with.
      expect(final, name).toMatchObject({ outcome: 'succeeded', attempt: { number: attempts.length, of: attemptsAllowed } });
      expect(status.usage ?? null, name).toEqual(final!.tokens);
    }
  }
  return audit;
}
