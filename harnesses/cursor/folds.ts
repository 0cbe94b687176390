// Cursor records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';
import { thinkingDeltaText } from './translator.ts';

type Rec = Readonly<Record<string, unknown>>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether thinking deltas with text are open when this record arrives (the record right before is one of them). */
function openThinking(before: readonly unknown[]): boolean {
  for (let i = before.length - 1; i >= 0; i--) {
    const r = before[i];
    const text = isRecord(r) && r.type === 'thinking' && r.subtype === 'delta' ? thinkingDeltaText(r) : undefined;
    if (text === undefined) return false;
    if (text.trim().length > 0) return true;
  }
  return false;
}

export const folds: readonly RecordFold[] = [
  { match: { type: 'user' }, kind: 'silent', why: 'the prompt echoed back: nothing happened' },
  {
    match: { type: 'thinking', subtype: 'completed' },
    when: (_record, { before }) => !openThinking(before),
    kind: 'silent',
    why: 'closes a thinking block with no text: the deltas carry the reasoning, and none came',
  },
  {
    match: { type: 'assistant' },
    when: (record) => {
      const content = isRecord(record.message) ? record.message.content : undefined;
      return Array.isArray(content) && content.every((b) => isRecord(b) && b.text === '');
    },
    kind: 'silent',
    why: 'an assistant message with no text: nothing to show',
  },
  { match: { type: 'connection', subtype: 'reconnected' }, kind: 'silent', why: 'recovery from the reconnecting warning: nothing new' },
  { match: { type: 'interaction_query', subtype: 'response' }, kind: 'silent', why: 'the answer to a question already warned about; its effect shows in the tool call that follows' },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model)' },
  { match: { type: 'result' }, kind: 'restated', why: "the session's terminal summary (verdict, usage, final text)" },
  { match: { type: 'tool_call', subtype: 'started' }, kind: 'restated', why: 'a start printed again under its pending call_id (same tool and arguments) is the same call' },
];
