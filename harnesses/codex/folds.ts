// Codex records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'turn.started' }, kind: 'silent', why: 'a turn boundary: what the turn does arrives as items' },
  {
    match: { type: ['item.started', 'item.updated'] },
    kind: 'silent',
    why: 'progress of an item: its item.completed reports the operation (an item never completed is reported at the end)',
  },
  {
    match: { type: 'item.completed', item: { type: ['agent_message', 'reasoning'], text: '' } },
    kind: 'silent',
    why: 'a message or reasoning summary with no text: nothing to show',
  },
  { match: { type: 'thread.started' }, kind: 'restated', why: 'the session id, stamped on every event after it' },
  { match: { type: 'turn.completed' }, kind: 'restated', why: "cumulative thread usage: the last report is the session's total" },
  { match: { type: 'turn.failed' }, kind: 'restated', why: 'repeats the error record before it; marks the session failed' },
];
