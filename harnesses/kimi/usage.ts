// Kimi Code usage -> normalized classes. Not on stdout: the session's wire files
// ($KIMI_CODE_HOME/sessions/wd_*/<session id>/agents/<agent>/wire.jsonl) hold one `usage.record` per model call,
// `usage {inputOther, output, inputCacheRead, inputCacheCreation}`, which reach the translator through the report
// the Stop hook copies into HOME (usage-hook.ts). Classes are disjoint: inputOther -> input (uncached),
// output -> output (no reasoning breakdown: reasoning null), inputCacheRead -> cache_read, inputCacheCreation ->
// cache_write. Kimi reports no cost. A resumed session's wire file also holds the earlier sessions' turns: only
// the records from this session's prompt on (the last `turn.prompt` of the main agent) count.
// A count that is not a non-negative integer makes its class null for the session (never 0), named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const KIMI_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'sum of the session wire files\' usage.record.usage (copied into HOME by a Stop hook): inputOther -> input, ' +
    'output -> output, inputCacheRead -> cache_read, inputCacheCreation -> cache_write (no reasoning breakdown, no cost).',
};

const RecordUsage = z.object({ inputOther: TokenCount, output: TokenCount, inputCacheRead: TokenCount, inputCacheCreation: TokenCount });
const WireLine = z.object({ type: z.string(), agentId: z.string().optional(), time: z.number().optional() });

export interface KimiUsage {
  tokens: TokenUsage;
  /** The usage records counted, as written. */
  raw: unknown[];
  /** Fields that failed their schema (`usage.record[i].usage.<field>`), and lines that were no JSON record. */
  unreadable: string[];
}

/** The report's text -> this session's usage; undefined when it holds no usage record (no model call answered). */
export function kimiUsage(report: string): KimiUsage | undefined {
  const lines: z.infer<typeof WireLine>[] = [];
  const values: unknown[] = [];
  const unreadable: string[] = [];
  const seen = new Set<string>();
  for (const text of report.split('\n')) {
    if (text.trim() === '' || seen.has(text)) continue;
    // The same record in two wire files (an agent's own and its parent's) counts once.
    seen.add(text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      unreadable.push('(a line that is no JSON)');
      continue;
    }
    const line = WireLine.safeParse(value);
    if (!line.success) continue;
    lines.push(line.data);
    values.push(value);
  }
  // This session's records: from the main agent's last prompt on (by time, which orders records across files).
  let since = -Infinity;
  for (const line of lines) if (line.type === 'turn.prompt' && (line.agentId ?? 'main') === 'main' && line.time !== undefined) since = Math.max(since, line.time);
  let classes: ClassValues = {};
  const raw: unknown[] = [];
  lines.forEach((line, i) => {
    if (line.type !== 'usage.record') return;
    if (line.time !== undefined && line.time < since) return;
    const usage = (values[i] as { usage?: unknown }).usage;
    raw.push(values[i]);
    const { fields, unreadable: bad } = readUsage(RecordUsage, usage);
    for (const f of bad) unreadable.push(`usage.record[${raw.length - 1}].usage.${f}`);
    const field = (key: keyof typeof fields) => (bad.includes(key) ? null : fields[key]);
    classes = addClassValues(classes, { input: field('inputOther'), output: field('output'), cache_read: field('inputCacheRead'), cache_write: field('inputCacheCreation') });
  });
  if (raw.length === 0) return undefined;
  return { tokens: shapeReadTokens(KIMI_USAGE_SHAPE, classes), raw, unreadable };
}
