// goose records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
// Streamed text chunks and tool requests need no entry: their event comes later (joined text, the response).
import type { RecordFold } from '../../shared/translate/folds.ts';

type Rec = Readonly<Record<string, unknown>>;
const asRecord = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const itemsOf = (record: Rec): (Rec | undefined)[] => {
  const content = asRecord(record.message)?.content;
  return Array.isArray(content) ? content.map(asRecord) : [];
};
/** Items that never yield an event: encrypted reasoning and the "thinking…" status line. */
const showsNothing = (item: Rec | undefined) => item?.type === 'redactedThinking' || (item?.type === 'systemNotification' && item.notificationType === 'thinkingMessage');

/** The tool requests of an assistant message, each as its JSON text. */
const requestsOf = (r: unknown): string[] | undefined => {
  const record = asRecord(r);
  if (record?.type !== 'message') return undefined;
  const items = itemsOf(record);
  if (items.length === 0 || !items.every((item) => item?.type === 'toolRequest')) return undefined;
  try {
    return items.map((item) => JSON.stringify(item));
  } catch {
    return undefined; // nested too deep to compare: the translator never saw it as JSON either
  }
};
/** A message whose every tool request another record in the stream also carries: the same call printed again. */
const repeatsRequests = (r: Rec, { before, after }: { before: readonly unknown[]; after: readonly unknown[] }) => {
  const mine = requestsOf(r);
  if (!mine) return false;
  const elsewhere = new Set([...before, ...after].flatMap((other) => requestsOf(other) ?? []));
  return mine.every((request) => elsewhere.has(request));
};

export const folds: readonly RecordFold[] = [
  { match: { type: 'notification' }, when: (r) => asRecord(r.log) !== undefined || asRecord(r.progress) !== undefined, kind: 'silent', why: "MCP log lines and progress ticks: tool output the tool's response repeats" },
  {
    match: { type: 'message', message: { role: 'user' } },
    when: (r) => itemsOf(r).every((item) => item?.type === 'text'),
    kind: 'silent',
    why: 'the prompt (or a goose-injected reminder) echoed back: nothing happened',
  },
  {
    match: { type: 'message', message: { role: 'assistant' } },
    when: (r) => itemsOf(r).every(showsNothing),
    kind: 'silent',
    why: 'encrypted reasoning or a "thinking…" status line: nothing to show',
  },
  {
    match: { type: 'message', message: { role: 'assistant' } },
    when: repeatsRequests,
    kind: 'restated',
    why: 'a tool request printed again under its id (same tool and arguments) is the same call, reported once',
  },
  { match: { type: 'complete' }, kind: 'restated', why: "the session's totals (usage, cost estimate), read once" },
];
