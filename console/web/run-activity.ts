// What the runs table's Activity column says. A live run: its latest event ("command: npm test"). A run that ended:
// how it ended ("succeeded", "cancelled", "failed: <why>"), since its latest event ("teardown started") is only the
// dispatcher cleaning up after it. Pure, so the runs page, its text filter and the tests agree.
import type { RunRow } from '../../shared/console.ts';
import { FINAL } from './wire.ts';

/** As long as the server's activity texts (console/server/activity.ts MAX_ACTIVITY_CHARS). */
const MAX_CHARS = 120;

export interface ShownActivity {
  text: string;
  /** A CSS suffix: the event type of a live run, `ended-<phase>` of a finished one. */
  kind: string;
  /** The cell's tooltip: the whole text, and for a finished run also its last event. */
  title: string;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]!.trim();
  return line.length <= MAX_CHARS ? line : `${line.slice(0, MAX_CHARS - 1)}…`;
}

/** "succeeded", "cancelled", "failed: the harness exited 1" (the outcome's words when there is no message). */
export function endedText(row: Pick<RunRow, 'phase' | 'outcome' | 'message'>): string {
  const word = row.phase.toLowerCase();
  if (row.phase !== 'Failed') return word;
  const why = row.message?.trim() ? firstLine(row.message) : row.outcome && row.outcome !== 'succeeded' ? row.outcome.replace(/_/g, ' ') : '';
  return why ? `${word}: ${why}` : word;
}

export function shownActivity(row: RunRow): ShownActivity | undefined {
  if (FINAL.has(row.phase)) {
    const text = endedText(row);
    const last = row.activity ? ` (last event: ${row.activity.text})` : '';
    const full = row.phase === 'Failed' && row.message ? `failed: ${row.message.trim()}` : text;
    return { text, kind: `ended-${row.phase.toLowerCase()}`, title: `${full}${last}` };
  }
  return row.activity ? { text: row.activity.text, kind: row.activity.type, title: row.activity.text } : undefined;
}
