// Kimi Code usage -> normalized classes. Not on stdout: the session's wire files
// ($KIMI_CODE_HOME/sessions/wd_*/<session id>/agents/<agent>/wire.jsonl, one per agent) hold one `usage.record` per
// model call, `usage {inputOther, output, inputCacheRead, inputCacheCreation}`. The driver tails them as the `wire`
// side file (adapter.ts) and hands each line to the translator's sideLine, which keeps only what is counted here
// (WireUsage.add): the usage records and the time of the main agent's last `turn.prompt`, never the long lines
// (profile, system prompt, tool snapshots, messages). Classes are disjoint: inputOther -> input (uncached),
// output -> output (no reasoning breakdown: reasoning null), inputCacheRead -> cache_read, inputCacheCreation ->
// cache_write. Kimi reports no cost. A resumed session's wire files are read from where they ended (the driver
// skips what an earlier session wrote), so they hold only this session's lines; as a guard anyway, only the
// records from this session's prompt on (the last `turn.prompt` of the main agent, by time) count. The same record
// seen in two wire files (an agent's own and its parent's) counts once.
// A count that is not a non-negative integer makes its class null for the session (never 0), named in a warning.
import { z } from 'zod';
import type { StdoutLine } from '../../shared/adapter.ts';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const KIMI_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'sum of the usage.record.usage lines of the session\'s wire files (tailed live as a side file): inputOther -> input, ' +
    'output -> output, inputCacheRead -> cache_read, inputCacheCreation -> cache_write (no reasoning breakdown, no cost).',
};

const RecordUsage = z.object({ inputOther: TokenCount, output: TokenCount, inputCacheRead: TokenCount, inputCacheCreation: TokenCount });
const USAGE_KEYS = ['inputOther', 'output', 'inputCacheRead', 'inputCacheCreation'] as const;
const WireLine = z.object({ type: z.string(), agentId: z.string().optional(), time: z.number().optional() });

/** A usage.record line longer than this keeps only its counts in raw_usage (Kimi's are ~200 characters). */
export const MAX_RAW_RECORD_CHARS = 4096;
/** Distinct usage records kept (one per model call); past it the session's usage is unknown rather than partial. */
export const MAX_USAGE_RECORDS = 50_000;
/** Unreadable fields named in the warning; the rest are counted. */
const MAX_NAMED = 20;

export interface KimiUsage {
  tokens: TokenUsage;
  /** The usage records counted, as written (a record past MAX_RAW_RECORD_CHARS: only its type, agent, time, counts). */
  raw: unknown[];
  /** Fields that failed their schema (`usage.record[i].usage.<field>`), and lines that were no wire record. */
  unreadable: string[];
}

interface Kept {
  time: number | undefined;
  raw: unknown;
  classes: ClassValues;
  bad: string[];
}

/** The usage-bearing part of the wire lines seen so far: bounded by the number of model calls, not by the files' size. */
export class WireUsage {
  private readonly records: Kept[] = [];
  private readonly seen = new Set<string>();
  /** Time of the main agent's last prompt. */
  private since = -Infinity;
  private noRecord = 0;
  private overflow = false;

  /** One wire line; false when it is no wire record (no JSON object with a `type`), which the caller reports. */
  add(line: StdoutLine): boolean {
    const parsed = WireLine.safeParse(line.json);
    if (!parsed.success) {
      // It might have been a usage record: the warning says the sum may lack it.
      this.noRecord += 1;
      return false;
    }
    const { type, agentId, time } = parsed.data;
    if (type === 'turn.prompt') {
      if ((agentId ?? 'main') === 'main' && time !== undefined) this.since = Math.max(this.since, time);
      return true;
    }
    if (type !== 'usage.record') return true;
    const usage = (line.json as { usage?: unknown }).usage;
    const short = line.text.length <= MAX_RAW_RECORD_CHARS;
    const raw = short ? line.json : { type, agentId, time, usage: pickCounts(usage) };
    const key = short ? line.text : JSON.stringify(raw);
    if (this.seen.has(key)) return true;
    if (this.records.length >= MAX_USAGE_RECORDS) {
      this.overflow = true;
      return true;
    }
    this.seen.add(key);
    const { fields, unreadable: bad } = readUsage(RecordUsage, usage);
    const field = (k: keyof typeof fields) => (bad.includes(k) ? null : (fields[k] ?? null));
    this.records.push({ time, raw, bad, classes: { input: field('inputOther'), output: field('output'), cache_read: field('inputCacheRead'), cache_write: field('inputCacheCreation') } });
    return true;
  }

  /** This session's usage; undefined when no usage record came (no model call answered, or no wire line was read). */
  total(): KimiUsage | undefined {
    let classes: ClassValues = {};
    const raw: unknown[] = [];
    const unreadable: string[] = [];
    for (const record of this.records) {
      if (record.time !== undefined && record.time < this.since) continue;
      for (const f of record.bad) unreadable.push(`usage.record[${raw.length}].usage.${f}`);
      raw.push(record.raw);
      classes = addClassValues(classes, record.classes);
    }
    if (this.overflow) {
      unreadable.push(`usage.record (more than ${MAX_USAGE_RECORDS})`);
      classes = { input: null, output: null, cache_read: null, cache_write: null };
    }
    if (raw.length === 0) return undefined;
    const named = unreadable.length > MAX_NAMED ? [...unreadable.slice(0, MAX_NAMED), `(${unreadable.length - MAX_NAMED} more)`] : unreadable;
    if (this.noRecord > 0) named.push(this.noRecord === 1 ? '(a line that was no JSON record)' : `(${this.noRecord} lines that were no JSON record)`);
    return { tokens: shapeReadTokens(KIMI_USAGE_SHAPE, classes), raw, unreadable: named };
  }
}

/** The four counts of a usage object, each only when it is a number (a long record's raw copy keeps nothing else). */
function pickCounts(usage: unknown): Record<string, number | null> {
  const source = typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>) : {};
  return Object.fromEntries(USAGE_KEYS.map((k) => [k, typeof source[k] === 'number' ? source[k] : null]));
}
