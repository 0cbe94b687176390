// Cursor records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'user' }, kind: 'silent', why: 'the prompt echoed back: nothing happened' },
  { match: { type: 'connection', subtype: 'reconnected' }, kind: 'silent', why: 'recovery from the reconnecting warning: nothing new' },
  { match: { type: 'interaction_query', subtype: 'response' }, kind: 'silent', why: 'the answer to a question already warned about; its effect shows in the tool call that follows' },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model)' },
  { match: { type: 'result' }, kind: 'restated', why: "the session's terminal summary (verdict, usage, final text)" },
  { match: { type: 'tool_call', subtype: 'started' }, kind: 'restated', why: 'a start printed again under its pending call_id (same tool and arguments) is the same call' },
];
