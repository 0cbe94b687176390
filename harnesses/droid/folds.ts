// Droid records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'message', role: 'user' }, kind: 'silent', why: 'the prompt echoed back: nothing happened' },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model, tools)' },
  { match: { type: 'reasoning' }, kind: 'restated', why: 'Droid prints each reasoning block twice with one id: reported once' },
  { match: { type: 'tool_call' }, kind: 'restated', why: 'a call printed again under its pending id (same tool and parameters) is the same call, reported once' },
  { match: { type: 'completion' }, kind: 'restated', why: "the session's terminal summary (usage, final text)" },
];
