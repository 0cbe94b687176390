// Amp records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
// Tool calls need no entry: their event comes with the result (or at the end).
import type { RecordFold } from '../../shared/translate/folds.ts';

const blocksOf = (record: Readonly<Record<string, unknown>>): unknown[] => {
  const message = record.message;
  const content = typeof message === 'object' && message !== null ? (message as Record<string, unknown>).content : undefined;
  return Array.isArray(content) ? content : [];
};
const isToolResult = (block: unknown) => typeof block === 'object' && block !== null && (block as Record<string, unknown>).type === 'tool_result';

/** The tool_use blocks of an assistant message, each as its JSON text. */
const toolUsesOf = (r: unknown): string[] | undefined => {
  if (typeof r !== 'object' || r === null || (r as Record<string, unknown>).type !== 'assistant') return undefined;
  const blocks = blocksOf(r as Readonly<Record<string, unknown>>);
  const isToolUse = (b: unknown) => typeof b === 'object' && b !== null && (b as Record<string, unknown>).type === 'tool_use';
  if (blocks.length === 0 || !blocks.every(isToolUse)) return undefined;
  try {
    return blocks.map((b) => JSON.stringify(b));
  } catch {
    return undefined; // nested too deep to compare: the translator never saw it as JSON either
  }
};

export const folds: readonly RecordFold[] = [
  {
    match: { type: 'user' },
    when: (record) => !blocksOf(record).some(isToolResult),
    kind: 'silent',
    why: 'the prompt echoed back: nothing happened',
  },
  {
    match: { type: 'assistant' },
    when: (record, { before, after }) => {
      const mine = toolUsesOf(record);
      const elsewhere = new Set([...before, ...after].flatMap((other) => toolUsesOf(other) ?? []));
      return mine !== undefined && mine.every((block) => elsewhere.has(block));
    },
    kind: 'restated',
    why: 'a message printed again whose tool calls (same id, tool and input) were already reported once',
  },
  {
    match: { type: 'assistant' },
    when: (record) => {
      const message = record.message as Record<string, unknown> | undefined;
      const empty = (b: unknown) => typeof b === 'object' && b !== null && ((b as Record<string, unknown>).text === '' || (b as Record<string, unknown>).thinking === '');
      return message?.usage === undefined && blocksOf(record).every(empty);
    },
    kind: 'silent',
    why: 'an assistant message with no text, reasoning, tool call or usage: nothing to show',
  },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, tools)' },
  { match: { type: 'result' }, kind: 'restated', why: "the session's terminal summary (verdict, final text)" },
];
