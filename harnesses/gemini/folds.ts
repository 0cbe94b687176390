// Gemini CLI records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls and assistant text deltas need no entry: their event
// comes with the result, or when the joined text is flushed.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { reportedShellOutcome } from './map-gemini-tools.ts';

const isShellCall = (id: unknown) => (r: unknown) => {
  const record = r as { type?: unknown; tool_id?: unknown; tool_name?: unknown } | undefined;
  return record?.type === 'tool_use' && record.tool_id === id && record.tool_name === 'run_shell_command';
};

export const folds: readonly RecordFold[] = [
  {
    match: { type: 'tool_result', status: 'success' },
    // Gemini prints only the command's output then (issue 41): the call's event is the same with or without it.
    when: (record, { before, after }) =>
      Object.keys(reportedShellOutcome(typeof record.output === 'string' ? record.output : undefined)).length === 0 &&
      [...before, ...after].some(isShellCall(record.tool_id)),
    kind: 'restated',
    why: "a shell command's successful result that reports no outcome of the command: its call carries the event",
  },
  { match: { type: 'message', role: 'user' }, kind: 'silent', why: 'the prompt echo' },
  { match: { type: 'init' }, kind: 'restated', why: 'session context (session id, model)' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage and verdict (a later one replaces it)' },
];
