import { describe, expect, it } from 'vitest';
import type { RunRow } from '../../shared/console.ts';
import { formatClock } from './format.ts';
import { durationText, runTimes } from './run-times.ts';

const START = Date.parse('2026-12-05T10:00:07Z');
const at = (ms: number) => new Date(ms).toISOString();
const row = (patch: Partial<RunRow>): RunRow => ({ key: 'ns/r', namespace: 'ns', name: 'r', uid: 'u', harness: 'gg', model: 'm', phase: 'Running', createdAt: at(START - 7_000), startedAt: at(START), ...patch });

describe('run times', () => {
  it('a running run: duration = now - startedAt, in whole seconds, growing with the clock', () => {
    expect(durationText(row({}), START + 997)).toBe('0 s');
    expect(durationText(row({}), START + 8_500)).toBe('8 s');
    expect(durationText(row({}), START + 9_999)).toBe('9 s');
    expect(durationText(row({}), START + 245_000)).toBe('4m 05s');
  });

  it('a finished run: duration = finishedAt - startedAt, exactly, whatever the clock', () => {
    const done = row({ phase: 'Succeeded', finishedAt: at(START + 8_500) });
    expect(durationText(done, START + 60_000)).toBe('8.5 s');
    expect(durationText(done, START + 3_600_000)).toBe('8.5 s');
  });

  it('not started yet: no duration', () => expect(durationText(row({ phase: 'Pending', startedAt: undefined }), START)).toBe('—'));

  it('shows Created only when it differs from Started', () => {
    const now = START + 1_000;
    expect(runTimes(row({}), now)).toEqual({ started: formatClock(at(START), now), created: formatClock(at(START - 7_000), now), duration: '1 s' });
    expect(runTimes(row({ createdAt: at(START) }), now)).not.toHaveProperty('created');
    // Queued: created, not started.
    expect(runTimes(row({ phase: 'Pending', startedAt: undefined }), now)).toMatchObject({ started: '—', created: formatClock(at(START - 7_000), now), duration: '—' });
  });
});
