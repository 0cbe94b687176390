// What the folds of Claude-shaped streams (Claude Code, Qwen Code; shared/translate/folds.ts) read of a record,
// written once: the content blocks of a message, the subagent calls that system task_* records report, and whether
// an assistant message has anything to show. Each harness's folds.ts lists its own folds from these.

export type Rec = Readonly<Record<string, unknown>>;

export const asRecord = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);

/** The object blocks of a record's `message.content` (none when it is a string or unreadable). */
export function blocksOf(record: Rec): Rec[] {
  const content = asRecord(record.message)?.content;
  return Array.isArray(content) ? content.map(asRecord).filter((b): b is Rec => b !== undefined) : [];
}

/**
 * The tool_use ids of subagent calls that `system` task_started/task_notification records among `records` report;
 * `toolUseIdOf` says where a harness's task record names it (Claude Code: top level; Qwen Code: under `data`).
 */
export function backgroundTaskCalls(records: readonly unknown[], toolUseIdOf: (record: Rec) => unknown): Set<string> {
  const ids = new Set<string>();
  for (const r of records) {
    const record = asRecord(r);
    if (record?.type !== 'system' || (record.subtype !== 'task_started' && record.subtype !== 'task_notification')) continue;
    const id = toolUseIdOf(record);
    if (typeof id === 'string') ids.add(id);
  }
  return ids;
}

/** An assistant message whose every block is empty text or reasoning (or, where documented, encrypted reasoning). */
export function nothingToShow(record: Rec, options: { redactedThinking: boolean }): boolean {
  return blocksOf(record).every((b) => (options.redactedThinking && b.type === 'redacted_thinking') || b.text === '' || b.thinking === '');
}

/** An assistant message that only calls subagents the task records report (they name its ids). */
export function onlyReportedSubagentCalls(record: Rec, tasks: ReadonlySet<string>): boolean {
  const blocks = blocksOf(record);
  return blocks.length > 0 && blocks.every((b) => b.type === 'tool_use' && tasks.has(b.id as string));
}

/** A user message whose every tool result succeeded and answers a subagent call the task records report. */
export function onlyReportedSubagentResults(record: Rec, tasks: ReadonlySet<string>): boolean {
  const results = blocksOf(record).filter((b) => b.type === 'tool_result');
  return results.length > 0 && results.every((b) => b.is_error !== true && tasks.has(b.tool_use_id as string));
}
