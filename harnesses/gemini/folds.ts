// Gemini CLI records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls and assistant text deltas need no entry: their event
// comes with the result, or when the joined text is flushed.
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'message', role: 'user' }, kind: 'silent', why: 'the prompt echo' },
  { match: { type: 'init' }, kind: 'restated', why: 'session context (session id, model)' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage and verdict (a later one replaces it)' },
];
