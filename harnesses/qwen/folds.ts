// Qwen Code records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls need no entry: their event comes with the result.
import type { RecordFold } from '../../shared/translate/folds.ts';

type Rec = Readonly<Record<string, unknown>>;
const asRecord = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const blocksOf = (record: Rec): Rec[] => {
  const content = asRecord(record.message)?.content;
  return Array.isArray(content) ? content.map(asRecord).filter((b): b is Rec => b !== undefined) : [];
};

/** `agent` calls whose subagent task_* records report (their data.tool_use_id), among `records`. */
function backgroundTaskCalls(records: readonly unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const r of records) {
    const record = asRecord(r);
    const toolUseId = asRecord(record?.data)?.tool_use_id;
    if (record?.type === 'system' && (record.subtype === 'task_started' || record.subtype === 'task_notification') && typeof toolUseId === 'string') ids.add(toolUseId);
  }
  return ids;
}

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
    when: (record) => blocksOf(record).every((b) => b.text === '' || b.thinking === ''),
    kind: 'silent',
    why: 'an assistant message with nothing to show (no blocks, empty text)',
  },
  {
    match: { type: 'user' },
    when: (record, { before }) => {
      const results = blocksOf(record).filter((b) => b.type === 'tool_result');
      const tasks = backgroundTaskCalls(before);
      return results.length > 0 && results.every((b) => b.is_error !== true && tasks.has(b.tool_use_id as string));
    },
    kind: 'silent',
    why: "an agent call's result when task_started/task_notification report the subagent: it only says it launched",
  },
  {
    match: { type: 'assistant' },
    when: (record, { before, after }) => {
      const tasks = backgroundTaskCalls([...before, ...after]);
      const blocks = blocksOf(record);
      return blocks.length > 0 && blocks.every((b) => b.type === 'tool_use' && tasks.has(b.id as string));
    },
    kind: 'restated',
    why: 'an agent call whose subagent task_started/task_notification report (they name its id)',
  },
  { match: { type: 'system', subtype: ['init', 'session_start'] }, kind: 'restated', why: 'session context (cwd, model, session id), which later records restate' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage and verdict (a later one replaces it)' },
];
