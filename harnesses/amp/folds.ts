// Amp records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
// Tool calls need no entry: their event comes with the result (or at the end).
import type { RecordFold } from '../../shared/translate/folds.ts';

const blocksOf = (record: Readonly<Record<string, unknown>>): unknown[] => {
  const message = record.message;
  const content = typeof message === 'object' && message !== null ? (message as Record<string, unknown>).content : undefined;
  return Array.isArray(content) ? content : [];
};
const isToolResult = (block: unknown) => typeof block === 'object' && block !== null && (block as Record<string, unknown>).type === 'tool_result';

export const folds: readonly RecordFold[] = [
  {
    match: { type: 'user' },
    when: (record) => !blocksOf(record).some(isToolResult),
    kind: 'silent',
    why: 'the prompt echoed back: nothing happened',
  },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, tools)' },
  { match: { type: 'result' }, kind: 'restated', why: "the session's terminal summary (verdict, final text)" },
];
