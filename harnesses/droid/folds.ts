// Droid records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

/** Another record in the stream is the same tool_call (same id, tool and parameters): a call printed again. */
const printedAgain = (record: Readonly<Record<string, unknown>>, { before, after }: { before: readonly unknown[]; after: readonly unknown[] }) => {
  const key = (r: unknown) => {
    const c = r as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null || c.type !== 'tool_call') return undefined;
    try {
      return JSON.stringify([c.id, c.toolId ?? c.toolName, c.parameters]);
    } catch {
      return undefined; // nested too deep to compare: the translator never saw it as JSON either
    }
  };
  const mine = key(record);
  return [...before, ...after].some((other) => key(other) === mine);
};

export const folds: readonly RecordFold[] = [
  { match: { type: 'message', role: 'user' }, kind: 'silent', why: 'the prompt echoed back: nothing happened' },
  { match: { type: 'message', role: 'assistant', text: '' }, kind: 'silent', why: 'an assistant message with no text: nothing to show' },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model, tools)' },
  { match: { type: 'reasoning' }, kind: 'restated', why: 'Droid prints each reasoning block twice with one id: reported once' },
  { match: { type: 'tool_call' }, when: printedAgain, kind: 'restated', why: 'a call printed again under its pending id (same tool and parameters) is the same call, reported once' },
  { match: { type: 'completion' }, kind: 'restated', why: "the session's terminal summary (usage, final text)" },
];
