// Kimi Code records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { role: 'meta', type: 'system.version' }, kind: 'silent', why: 'the CLI version (the probe reads it too)' },
  { match: { role: 'meta', type: 'session.resume_hint' }, kind: 'restated', why: 'the session id and how to resume it' },
  { match: { role: 'assistant' }, when: (r) => (r.content === undefined || r.content === null || r.content === '') && r.reasoning_content === undefined && (!Array.isArray(r.tool_calls) || r.tool_calls.length === 0), kind: 'silent', why: 'an assistant message with nothing in it' },
];
