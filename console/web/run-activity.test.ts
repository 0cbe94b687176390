import { describe, expect, it } from 'vitest';
import type { RunRow } from '../../shared/console.ts';
import { endedText, shownActivity } from './run-activity.ts';

const teardown = { text: 'teardown started', type: 'system', stage: 'teardown', at: '2026-12-05T12:00:00Z' } as const;
const row = (patch: Partial<RunRow>): RunRow => ({ key: 'ns/r', namespace: 'ns', name: 'r', uid: 'u', harness: 'gg', model: 'm', phase: 'Running', createdAt: '2026-12-05T11:00:00Z', ...patch });

describe('the Activity column', () => {
  it('a live run shows its latest event', () => {
    expect(shownActivity(row({ activity: { text: 'command: npm test', type: 'command', at: teardown.at } }))).toEqual({ text: 'command: npm test', kind: 'command', title: 'command: npm test' });
    expect(shownActivity(row({ phase: 'Pending' }))).toBeUndefined();
  });

  it('a run that ended shows how it ended, not its last event (the last event stays in the tooltip)', () => {
    expect(shownActivity(row({ phase: 'Succeeded', outcome: 'succeeded', activity: teardown }))).toEqual({
      text: 'succeeded',
      kind: 'ended-succeeded',
      title: 'succeeded (last event: teardown started)',
    });
    expect(shownActivity(row({ phase: 'Cancelled', outcome: 'cancelled', activity: teardown }))?.text).toBe('cancelled');
    expect(shownActivity(row({ phase: 'Cancelled', outcome: 'cancelled' }))).toMatchObject({ text: 'cancelled', title: 'cancelled' });
  });

  it('a failed run says why: the first line of its message (cut at 120 chars), else its outcome', () => {
    expect(endedText({ phase: 'Failed', outcome: 'harness_failed', message: 'the harness exited 1\nstderr: boom' })).toBe('failed: the harness exited 1');
    expect(endedText({ phase: 'Failed', outcome: 'timed_out' })).toBe('failed: timed out');
    expect(endedText({ phase: 'Failed', outcome: 'infrastructure_failed', message: '  ' })).toBe('failed: infrastructure failed');
    expect(endedText({ phase: 'Failed' })).toBe('failed');
    const long = endedText({ phase: 'Failed', outcome: 'harness_failed', message: 'x'.repeat(300) });
    expect(long).toBe(`failed: ${'x'.repeat(119)}…`);
    // The tooltip has the whole message.
    expect(shownActivity(row({ phase: 'Failed', outcome: 'harness_failed', message: 'exit 1\nstderr: boom', activity: teardown }))?.title).toBe('failed: exit 1\nstderr: boom (last event: teardown started)');
  });
});
