// Grok records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). On stdout only `end`: `text` / `thought` come out at the end when no
// updates.jsonl line was read (the fallback). The rest are updates.jsonl
// records (the `updates` side file), listed for the same accounting when side lines are checked.
import type { RecordFold } from '../../shared/translate/folds.ts';

const update = (sessionUpdate: string | string[]) => ({ params: { update: { sessionUpdate } } });

export const folds: readonly RecordFold[] = [
  { match: { type: 'end' }, kind: 'restated', why: "the session's summary (session id, usage, cost, stop reason); a repeated end changes nothing" },
  { match: update('user_message_chunk'), kind: 'silent', why: "the prompt echo (a subagent's: its task)" },
  { match: update('turn_completed'), kind: 'restated', why: "the turn's stop reason and usage, which stdout's end reports (with uncached input)" },
  { match: update('retry_state'), when: (r) => (r.params as { update: { type?: unknown } }).update.type === 'failed', kind: 'restated', why: "a model request that finally failed: stdout's error reports it" },
  { match: update('tool_call_update'), when: (r) => !['completed', 'failed'].includes((r.params as { update: { status?: unknown } }).update.status as string), kind: 'silent', why: "a running call's input and progress: its completed/failed update reports the call with them" },
];
