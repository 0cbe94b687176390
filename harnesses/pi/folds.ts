// Pi records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). A tool_execution_start needs none when its call comes out with its end;
// it is listed because the assistant message's toolCall block announced the same call first.
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'session' }, kind: 'restated', why: 'the session header (session id, cwd)' },
  { match: { type: ['agent_start', 'turn_start'] }, kind: 'silent', why: 'lifecycle markers' },
  { match: { type: 'message_start' }, kind: 'silent', why: 'a message begins; its message_end carries it whole' },
  { match: { type: 'message_update' }, kind: 'silent', why: 'streaming deltas of the message its message_end carries whole' },
  { match: { type: 'message_end', message: { role: 'user' } }, kind: 'silent', why: 'the prompt echo' },
  { match: { type: 'message_end', message: { role: 'toolResult' } }, kind: 'restated', why: 'a tool result, reported with its call from tool_execution_end' },
  { match: { type: 'tool_execution_start' }, kind: 'restated', why: "the call the assistant message's toolCall block announced; reported with its end" },
  { match: { type: 'tool_execution_update' }, kind: 'silent', why: "a running tool's partial output; tool_execution_end carries the result" },
  { match: { type: 'turn_end' }, kind: 'restated', why: "the turn's assistant message and tool results again" },
  { match: { type: 'agent_end' }, kind: 'restated', why: "the run's messages again; its arrival makes the summed usage the session's" },
  { match: { type: 'queue_update' }, kind: 'silent', why: 'steering and follow-up queues (none in print mode)' },
  { match: { type: 'auto_retry_end', success: true }, kind: 'silent', why: 'a retry that worked: its answer follows as messages' },
  { match: { type: 'compaction_end' }, when: (r) => r.errorMessage === undefined && r.aborted !== true, kind: 'restated', why: 'a compaction that finished (compaction_start reported it)' },
];
