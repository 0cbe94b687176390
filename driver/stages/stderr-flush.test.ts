// issue 21: an open stderr diagnostic is published after a quiet gap, not held until the next line or the end.
// The timers are a hand-driven fake: no sleeps.
import { describe, expect, it } from 'vitest';
import { TranslationSession } from '../../shared/translate/session.ts';
import type { HarnessAdapter } from '../../shared/adapter.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { quietGapFlusher, STDERR_QUIET_GAP_MS } from './stderr-flush.ts';
import type { Timers } from './stderr-flush.ts';

const clock = { now: () => new Date('2026-12-04T20:00:00.000Z') };
const adapter: HarnessAdapter = {
  slug: 'demo',
  usageShape: { classes: [], doc: '' },
  invocation: () => ({ argv: ['demo'], env: {}, stdin: 'close', files: [] }),
  createTranslator: () => ({ line: () => [], sessionId: () => undefined, finish: () => ({ events: [], result: { tokens: null, raw_usage: null, reported_cost_usd: null } }) }),
};

/** Timers that fire only when the test says so. */
function fakeTimers() {
  const armed = new Map<number, { callback: () => void; ms: number }>();
  let next = 0;
  const timers: Timers = {
    setTimeout: (callback, ms) => {
      armed.set(++next, { callback, ms });
      return next;
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
  };
  const fire = () => {
    const due = [...armed.values()];
    armed.clear();
    for (const t of due) t.callback();
  };
  return { timers, armed, fire };
}

describe('quietGapFlusher', () => {
  it('publishes the open diagnostic whole once stderr is quiet for the gap; each line restarts the wait', () => {
    const session = new TranslationSession(adapter, {}, { clock });
    const { timers, armed, fire } = fakeTimers();
    const published: HarnessEvent[] = [];
    const flusher = quietGapFlusher(session, (events) => published.push(...events), timers);
    const feed = (text: string) => {
      published.push(...session.stderr({ text, bytes: text.length, truncated: false }));
      flusher.touched();
    };
    feed('Error: boom');
    expect([...armed.values()].map((t) => t.ms)).toEqual([STDERR_QUIET_GAP_MS]);
    feed('    at main (x.js:1:1)');
    expect(armed.size).toBe(1); // re-armed, not stacked
    expect(published).toEqual([]);
    fire();
    expect(published).toEqual([{ type: 'warning', timestamp: '2026-12-04T20:00:00.000Z', message: 'Error: boom\n    at main (x.js:1:1)' }]);
    // Nothing open: no timer; a blank line alone opens nothing worth a warning.
    feed('   ');
    fire();
    expect(published).toHaveLength(1);
  });

  it('stop() disarms: the session end flushes instead, once', () => {
    const session = new TranslationSession(adapter, {}, { clock });
    const { timers, armed } = fakeTimers();
    const flusher = quietGapFlusher(session, () => expect.unreachable('no flush after stop'), timers);
    session.stderr({ text: 'fatal: out of quota', bytes: 19, truncated: false });
    flusher.touched();
    flusher.stop();
    expect(armed.size).toBe(0);
    const { events } = session.finish({ code: 0, signal: null });
    expect(events).toEqual([{ type: 'warning', timestamp: '2026-12-04T20:00:00.000Z', message: 'fatal: out of quota' }]);
  });
});
