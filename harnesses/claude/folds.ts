// Claude Code records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls need no entry: their event comes with the result.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { backgroundTaskCalls, blocksOf, nothingToShow, onlyReportedSubagentCalls, onlyReportedSubagentResults } from '../../shared/translate/anthropic-folds.ts';
import type { Rec } from '../../shared/translate/anthropic-folds.ts';
import { SILENT_SYSTEM, SKILL_BASE } from './translator.ts';

const mentionsSkillBase = (record: Rec): boolean => blocksOf(record).some((b) => typeof b.text === 'string' && SKILL_BASE.test(b.text));
/** Task/Agent calls whose subagent task_* records report (their tool_use_id), among `records`. */
const taskCalls = (records: readonly unknown[]) => backgroundTaskCalls(records, (record) => record.tool_use_id);

export const folds: readonly RecordFold[] = [
  { match: { type: 'system', subtype: [...SILENT_SYSTEM] }, kind: 'silent', why: 'token estimates, status pings, task status patches and background task snapshots' },
  { match: { type: 'stream_event' }, kind: 'silent', why: 'partial-message deltas: the complete assistant record follows' },
  {
    match: { type: 'user' },
    when: (record) => blocksOf(record).every((b) => b.type !== 'tool_result') && !mentionsSkillBase(record),
    kind: 'silent',
    why: 'prompt echoes and subagent prompts',
  },
  {
    match: { type: 'user' },
    // Anywhere in the stream: a result that arrives before its call is held and paired with it, and the task_*
    // records then report the subagent whichever came first.
    when: (record, { before, after }) => onlyReportedSubagentResults(record, taskCalls([...before, ...after])),
    kind: 'silent',
    why: "a Task call's result when task_started/task_notification report the subagent: it only says it launched or repeats the end",
  },
  {
    match: { type: 'assistant' },
    when: (record) => nothingToShow(record, { redactedThinking: true }),
    kind: 'silent',
    why: 'an assistant message with nothing to show: no blocks, empty text, encrypted reasoning (its tokens are in usage)',
  },
  {
    match: { type: 'assistant' },
    when: (record, { before, after }) => onlyReportedSubagentCalls(record, taskCalls([...before, ...after])),
    kind: 'restated',
    why: 'a Task call whose subagent task_started/task_notification report (they name its id)',
  },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model, session id), which later records restate' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage, cost and verdict (a later one replaces it)' },
];
