// Qwen Code records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls need no entry: their event comes with the result.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { asRecord, backgroundTaskCalls, blocksOf, nothingToShow, onlyReportedSubagentCalls, onlyReportedSubagentResults } from '../../shared/translate/anthropic-folds.ts';

/** `agent` calls whose subagent task_* records report (their data.tool_use_id), among `records`. */
const taskCalls = (records: readonly unknown[]) => backgroundTaskCalls(records, (record) => asRecord(record.data)?.tool_use_id);

export const folds: readonly RecordFold[] = [
  { match: { type: 'stream_event' }, kind: 'silent', why: 'goal_state snapshots and partial deltas: the complete assistant record follows' },
  {
    match: { type: 'user' },
    when: (record) => blocksOf(record).every((b) => b.type !== 'tool_result'),
    kind: 'silent',
    why: 'prompt echoes, subagent prompts and "Background agent … completed." notices',
  },
  {
    match: { type: 'assistant' },
    when: (record) => nothingToShow(record, { redactedThinking: false }),
    kind: 'silent',
    why: 'an assistant message with nothing to show (no blocks, empty text)',
  },
  {
    match: { type: 'user' },
    // Anywhere in the stream, as for Claude Code: a result that arrives before its call is held and paired with it,
    // and the task_* records then report the subagent whichever came first (FUZZ_SEED=1593133268).
    when: (record, { before, after }) => onlyReportedSubagentResults(record, taskCalls([...before, ...after])),
    kind: 'silent',
    why: "an agent call's result when task_started/task_notification report the subagent: it only says it launched",
  },
  {
    match: { type: 'assistant' },
    when: (record, { before, after }) => onlyReportedSubagentCalls(record, taskCalls([...before, ...after])),
    kind: 'restated',
    why: 'an agent call whose subagent task_started/task_notification report (they name its id)',
  },
  { match: { type: 'system', subtype: ['init', 'session_start'] }, kind: 'restated', why: 'session context (cwd, model, session id), which later records restate' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage and verdict (a later one replaces it)' },
];
