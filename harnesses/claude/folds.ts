// Claude Code records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tool calls need no entry: their event comes with the result.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { SILENT_SYSTEM, SKILL_BASE } from './translator.ts';

type Rec = Readonly<Record<string, unknown>>;
const asRecord = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const blocksOf = (record: Rec): Rec[] => {
  const content = asRecord(record.message)?.content;
  return Array.isArray(content) ? content.map(asRecord).filter((b): b is Rec => b !== undefined) : [];
};
const mentionsSkillBase = (record: Rec): boolean => blocksOf(record).some((b) => typeof b.text === 'string' && SKILL_BASE.test(b.text));

/** Task/Agent calls that a task_started record took over (its tool_use_id), from the records before this one. */
function backgroundTaskCalls(earlier: readonly unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const r of earlier) {
    const record = asRecord(r);
    if (record?.type === 'system' && record.subtype === 'task_started' && typeof record.tool_use_id === 'string') ids.add(record.tool_use_id);
  }
  return ids;
}

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
    when: (record, earlier) => {
      const results = blocksOf(record).filter((b) => b.type === 'tool_result');
      const tasks = backgroundTaskCalls(earlier);
      return results.length > 0 && results.every((b) => b.is_error !== true && tasks.has(b.tool_use_id as string));
    },
    kind: 'silent',
    why: 'the result of a Task call running in the background only says it launched: task_notification reports its end',
  },
  { match: { type: 'system', subtype: 'init' }, kind: 'restated', why: 'session context (cwd, model, session id), which later records restate' },
  { match: { type: 'result' }, kind: 'restated', why: 'the session summary: usage, cost and verdict (a later one replaces it)' },
];
