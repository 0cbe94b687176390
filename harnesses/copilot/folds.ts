// Copilot records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls need no entry: their event comes with the completion.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { SILENT } from './translator.ts';

type Rec = Readonly<Record<string, unknown>>;
const dataOf = (record: Rec): Rec => (typeof record.data === 'object' && record.data !== null ? (record.data as Rec) : {});

/** Reasoning texts the assistant.message records in `records` already carried. */
const reasoningTexts = (records: readonly unknown[]): Set<unknown> =>
  new Set(records.map((r) => (typeof r === 'object' && r !== null && (r as Rec).type === 'assistant.message' ? dataOf(r as Rec).reasoningText : undefined)));

export const folds: readonly RecordFold[] = [
  { match: { type: [...SILENT] }, kind: 'silent', why: 'progress, streaming deltas and bookkeeping whose content reaches us again in a complete record' },
  {
    match: { type: 'assistant.message' },
    when: (record) => {
      const { content, reasoningText } = dataOf(record);
      return (typeof content !== 'string' || content.trim() === '') && !reasoningText;
    },
    kind: 'restated',
    why: 'an assistant message that only calls tools: the model it names is restated by later messages and the usage report',
  },
  {
    match: { type: 'assistant.reasoning' },
    when: (record, { before }) => reasoningTexts(before).has(dataOf(record).content) || dataOf(record).content === '',
    kind: 'silent',
    why: 'reasoning the assistant.message before it already carried',
  },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: session id, exit code (a later one replaces it)' },
  {
    match: { type: 'tool.execution_complete' },
    when: (record, { before, after }) =>
      [...before, ...after].some((r) => typeof r === 'object' && r !== null && (r as Rec).type === 'tool.execution_start' && dataOf(r as Rec).toolName === 'task' && dataOf(r as Rec).toolCallId === dataOf(record).toolCallId),
    kind: 'silent',
    why: "a task (subagent) call's completion: subagent.started/completed report it with the subagent's own id",
  },
  {
    match: { type: 'tool.execution_start', data: { toolName: 'task' } },
    kind: 'restated',
    why: "a task (subagent) call: subagent.started/completed report it with the subagent's own id",
  },
];
