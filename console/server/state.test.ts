// ConsoleState over synthetic sources (no NATS, no cluster): rows from Runs, activity from events (the latest by
// stream sequence, also for an event that came before its Run), a re-created Run starts clean, coalesced batches.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunRow, ThrottleHoldRow } from '../../shared/console.ts';
import type { ConsoleRun, ConsoleSources, RunChange, StreamedEvent } from './sources.ts';
import { ACTIVITY_RETRY_MS, BATCH_MS, ConsoleState } from './state.ts';

const run = (name: string, uid = `uid-${name}`, phase: 'Pending' | 'Running' = 'Running'): ConsoleRun => ({ metadata: { namespace: 'n', name, uid, creationTimestamp: '2026-12-05T04:00:00Z' }, spec: { harness: 'gg', model: 'm' }, status: { phase } });
const ev = (runId: string, seq: number, command: string): StreamedEvent => ({ runId, seq, runSeq: seq, at: `2026-12-05T04:00:${String(seq).padStart(2, '0')}Z`, event: { type: 'command', timestamp: '2026-12-05T04:00:00Z', command } as HarnessEvent });

let onChange: (c: RunChange) => void;
let pushEvents: (events: StreamedEvent[]) => void;
let batches: { rows: RunRow[]; keys: string[] }[];
let state: ConsoleState;

beforeEach(async () => {
  vi.useFakeTimers();
  batches = [];
  const sources: ConsoleSources = {
    runs: { list: () => [run('a')], subscribe: (l) => ((onChange = l), () => undefined) },
    runDetail: { watch: () => () => undefined },
    kubeEvents: { watch: () => () => undefined },
    writer: { cancel: async () => 'cancelled' },
    harnesses: { list: () => [{ slug: 'gg' }], readiness: () => ({ ready: true, missing: [] }) },
    configs: { list: () => new Map(), subscribe: () => () => undefined },
    activity: { start: async (onEvents) => ((pushEvents = onEvents), { stop: async () => undefined }) },
  };
  state = new ConsoleState(sources);
  await state.start();
  state.onRows({ onRows: (rows, keys) => batches.push({ rows, keys }) });
});
afterEach(async () => {
  await state.stop();
  vi.useRealTimers();
});

describe('ConsoleState', () => {
  it('keeps the latest event by stream sequence as the activity, whatever order they come in', () => {
    pushEvents([ev('n_a', 5, 'npm test'), ev('n_a', 3, 'npm ci')]);
    expect(state.row('n/a')).toMatchObject({ activity: { text: 'command: npm test' }, lastEventAt: '2026-12-05T04:00:05Z' });
  });

  it('an event that came before its Run is its activity once the Run appears', () => {
    pushEvents([ev('n_b', 9, 'make')]);
    expect(state.row('n/b')).toBeUndefined();
    onChange({ type: 'upsert', run: run('b') });
    expect(state.row('n/b')?.activity?.text).toBe('command: make');
  });

  it('a Run created again under its name (another uid) starts without the earlier activity', () => {
    pushEvents([ev('n_a', 2, 'old')]);
    onChange({ type: 'upsert', run: run('a', 'uid-second') });
    expect(state.row('n/a')?.activity).toBeUndefined();
    expect(state.row('n/a')?.uid).toBe('uid-second');
  });

  it('coalesces changes into one batch per interval: the last state of each row, removals apart', () => {
    onChange({ type: 'upsert', run: run('c', 'uid-c', 'Pending') });
    onChange({ type: 'upsert', run: run('c', 'uid-c', 'Running') });
    pushEvents([ev('n_c', 1, 'ls')]);
    onChange({ type: 'delete', run: run('a') });
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(BATCH_MS);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.rows.map((r) => [r.key, r.phase, r.activity?.text])).toEqual([['n/c', 'Running', 'command: ls']]);
    expect(batches[0]!.keys).toEqual(['n/a']);
    expect(state.runRows().map((r) => r.key)).toEqual(['n/c']);
  });

  it('counts the harness slots as rows change', () => {
    onChange({ type: 'upsert', run: run('p', 'uid-p', 'Pending') });
    expect(state.harnessRows()).toEqual([expect.objectContaining({ slug: 'gg', occupied: 1, queued: 1 })]);
  });
});

describe('ConsoleState provider back-pressure (holds)', () => {
  it('shows the holds on the providers a harness\'s key goes to, and sends the harness rows again when they change', async () => {
    let holds: ThrottleHoldRow[] = [];
    let notify: () => void = () => undefined;
    const sources: ConsoleSources = {
      runs: { list: () => [], subscribe: () => () => undefined },
      runDetail: { watch: () => () => undefined },
      kubeEvents: { watch: () => () => undefined },
      writer: { cancel: async () => 'cancelled' },
      harnesses: { list: () => [{ slug: 'claude', key: { gateway: ['anthropic'] } }, { slug: 'codex', key: { gateway: ['openai'] } }, { slug: 'sub' }], readiness: () => ({ ready: true, missing: [] }) },
      configs: { list: () => new Map(), subscribe: () => () => undefined },
      throttles: { list: () => holds, subscribe: (l) => ((notify = l), () => undefined) },
    };
    const withHolds = new ConsoleState(sources);
    await withHolds.start();
    const sent: string[][] = [];
    withHolds.onHarnesses({ onHarnesses: (rows) => sent.push(rows.map((r) => `${r.slug}:${r.holds?.map((h) => h.model).join(',') ?? '-'}`)) });
    expect(withHolds.harnessRows().map((r) => r.holds)).toEqual([undefined, undefined, undefined]);
    holds = [{ provider: 'anthropic', model: 'claude-x', heldUntil: '2026-12-05T04:00:30.000Z', level: 2, status: 429, retryAfterS: 30, count: 4 }];
    notify();
    vi.advanceTimersByTime(BATCH_MS);
    expect(sent).toEqual([['claude:claude-x', 'codex:-', 'sub:-']]);
    expect(withHolds.harnessRows()[0]!.holds).toEqual(holds);
    await withHolds.stop();
  });
});

describe('ConsoleState activity consumer', () => {
  it('is started again after a back-off when it fails, and the problem is reported until events flow again', async () => {
    let starts = 0;
    let fail: (error: Error) => void = () => undefined;
    let deliver: (events: StreamedEvent[]) => void = () => undefined;
    const flaky = new ConsoleState({
      runs: { list: () => [run('a')], subscribe: () => () => undefined },
      runDetail: { watch: () => () => undefined },
      kubeEvents: { watch: () => () => undefined },
      writer: { cancel: async () => 'cancelled' },
      harnesses: { list: () => [], readiness: () => ({ ready: true, missing: [] }) },
      configs: { list: () => new Map(), subscribe: () => () => undefined },
      activity: {
        start: async (onEvents, onError) => {
          starts++;
          deliver = onEvents;
          fail = onError;
          return { stop: async () => undefined };
        },
      },
    });
    await flaky.start();
    fail(new Error('consumer deleted'));
    expect(flaky.natsProblem).toBe('consumer deleted');
    expect(starts).toBe(1);
    await vi.advanceTimersByTimeAsync(ACTIVITY_RETRY_MS);
    expect(starts).toBe(2);
    deliver([ev('n_a', 7, 'back')]);
    expect(flaky.natsProblem).toBeUndefined();
    expect(flaky.row('n/a')?.activity?.text).toBe('command: back');
    await flaky.stop();
    fail(new Error('after stop'));
    await vi.advanceTimersByTimeAsync(10 * ACTIVITY_RETRY_MS);
    expect(starts).toBe(2);
  });
});
