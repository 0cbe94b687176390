// readRunStream(untilResult) against a real nats-server, after a result another attempt may follow: with
// nextAttemptWithinMs it ends when no message of a later attempt comes in time (the last result stands), and reads
// on to the later attempt's result when one does.
import { describe, expect, it } from 'vitest';
import { attemptStreamPerFile } from '../test/support/run-attempts.ts';
import { readRunStream } from './reader.ts';
import type { ReadOptions, StreamItem } from './reader.ts';
import { natsSettings } from './settings.ts';
import type { RunResult } from '../shared/run.ts';

const perFile = attemptStreamPerFile();

const shown = (item: StreamItem) => (item.kind === 'event' ? (item.event.type === 'agent' ? item.event.message : item.event.type) : item.kind === 'result' ? `result ${item.result.outcome} ${item.result.attempt?.number}` : 'invalid');

/** Reads the run to its end; `onItem` may act once an item has been read (publish what comes next). */
async function read(runId: string, options: Partial<ReadOptions>, onItem: (item: StreamItem) => Promise<void> = async () => undefined) {
  const items: string[] = [];
  const standing: RunResult[] = [];
  for await (const item of readRunStream({ settings: natsSettings(perFile.server().url), runId, replay: true, untilResult: true, onNoNextAttempt: (r) => standing.push(r), ...options })) {
    items.push(shown(item));
    await onItem(item);
  }
  return { items, standing: standing.map((r) => r.attempt) };
}

describe('readRunStream past a result another attempt may follow', () => {
  it('no message of a later attempt within the bound: the iteration ends at that result, and the caller is told', async () => {
    const runId = 'ns_no-next-attempt';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    // The dispatcher's teardown of attempt 1's Pod comes after its result and carries no attempt: it proves nothing.
    await perFile.publisher().clusterEvent(runId, 'driver pod tcab-run-x deleted');
    const { items, standing } = await read(runId, { nextAttemptWithinMs: 300 });
    expect(items).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1', 'system']);
    expect(standing).toEqual([{ number: 1, of: 3 }]);
  });

  it('a later attempt stored already: read on to its result, the bound never fires', async () => {
    const runId = 'ns_next-attempt-stored';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    await perFile.publisher().attempt(runId, 2, 3, 'succeeded', false);
    const { items, standing } = await read(runId, { nextAttemptWithinMs: 300 });
    expect(items).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1', 'attempt 2 event 1', 'attempt 2 event 2', 'result succeeded 2']);
    expect(standing).toEqual([]);
  });

  it('a later attempt\'s first event, published live, cancels the bound: its result is read however late the clock says it is', async () => {
    const runId = 'ns_next-attempt-live';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    // A clock the test moves: once attempt 2 has begun, an hour passes at once. A bound still armed would end the
    // read at its next wait (the deadline long past, nothing buffered); cancelled, the read waits for the rest of
    // attempt 2, which comes after that wait began. (The delay only gives a broken reader room to stop: the read
    // of a correct one waits on the messages, whenever they come.)
    let offset = 0;
    const clock = () => performance.now() + offset;
    let rest: Promise<void> | undefined;
    const { items, standing } = await read(runId, { nextAttemptWithinMs: 60_000, clock }, async (item) => {
      if (item.kind === 'result' && item.result.attempt?.number === 1) await perFile.publisher().event(runId, 2, 1);
      if (item.kind === 'event' && item.attempt === 2 && item.seq === 1) {
        offset += 3_600_000;
        rest = new Promise((resolve) => setTimeout(resolve, 100)).then(async () => {
          await perFile.publisher().event(runId, 2, 2);
          await perFile.publisher().result(runId, 2, 3, 'harness_failed', false);
        });
      }
    });
    await rest;
    expect(items).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1', 'attempt 2 event 1', 'attempt 2 event 2', 'result harness_failed 2']);
    expect(standing).toEqual([]);
  });

  it('with a type filter, a later attempt whose messages are all of other types is still read on to its result', async () => {
    const runId = 'ns_next-attempt-typed';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const items: string[] = [];
    for await (const item of readRunStream({ settings: natsSettings(perFile.server().url), runId, type: 'command', replay: true, untilResult: true, nextAttemptWithinMs: 60_000 })) {
      items.push(shown(item));
      if (item.kind === 'result' && item.result.attempt?.number === 1) await perFile.publisher().attempt(runId, 2, 3, 'succeeded', false);
    }
    expect(items).toEqual(['result infrastructure_failed 1', 'result succeeded 2']);
  });

  it('without the option a reader still reads on (no bound): it ends when its caller stops it', async () => {
    const runId = 'ns_next-attempt-unbounded';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const abort = new AbortController();
    const { items, standing } = await read(runId, { signal: abort.signal }, async (item) => {
      if (item.kind === 'result') abort.abort();
    });
    expect(items).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed 1']);
    expect(standing).toEqual([]);
  });
});
