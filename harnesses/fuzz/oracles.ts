// What the translator property suite asserts about a translated stream, each a real check against the
// unmutated recording rather than a hard-coded result:
// - contract: nothing thrown by the translator, every event valid against shared/events.ts;
// - no line lost: a line that yields no event at its arrival either changed what the session reported (the
//   stream without it translates differently) or is one of the translator's documented folds;
// - no invented value: after a field gets a wrong type (or the stream is cut short), every event and summary
//   value is one the unmutated stream (or the stream without the damaged record) also reported: fields may go
//   missing and records may fall back to `unknown`/`warning`, but no field gains a value and no boolean or number
//   changes (`is_error: "true"` must never become `is_success: true`).
import { LineSplitter } from '../../shared/translate/lines.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import { foldOf } from '../../shared/translate/folds.ts';
import { parseJsonLine } from '../../shared/translate/json-line.ts';
import type { RecordFold } from '../../shared/translate/folds.ts';
import { HarnessEvent as HarnessEventSchema } from '../../shared/events.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { HarnessAdapter, SessionReports, SessionResult, SessionTranslator } from '../../shared/adapter.ts';

const FIXED_CLOCK = { now: () => new Date('2026-12-02T12:00:00.000Z') };
/** A workdir, so translators that make reported paths absolute do so. */
export const FUZZ_WORKDIR = '/scratch/fuzz-workdir';

export interface Translation {
  /** Events produced at each line's arrival, by line index. */
  perLine: HarnessEvent[][];
  finish: HarnessEvent[];
  result: SessionResult | undefined;
  /** What the translator threw (the engine may turn a throw into `unknown`; the suite still counts it). */
  thrown: unknown[];
}

/** The adapter with its translator observed: throws are recorded, then passed on to the engine unchanged. */
function observed(adapter: HarnessAdapter, thrown: unknown[]): HarnessAdapter {
  const watch = <T>(f: () => T): T => {
    try {
      return f();
    } catch (error) {
      thrown.push(error);
      throw error;
    }
  };
  return {
    ...adapter,
    createTranslator(context): SessionTranslator {
      const inner = adapter.createTranslator(context);
      return {
        line: (line) => watch(() => inner.line(line)),
        sessionId: () => watch(() => inner.sessionId()),
        finish: (reports) => watch(() => inner.finish(reports)),
      };
    },
  };
}

/** Runs the lines through the real engine, one line at a time, so each event is attributed to its line. */
export function translate(adapter: HarnessAdapter, lines: readonly Buffer[], reports: SessionReports): Translation {
  const thrown: unknown[] = [];
  const session = new TranslationSession(observed(adapter, thrown), { workdir: FUZZ_WORKDIR }, { clock: FIXED_CLOCK });
  const splitter = new LineSplitter();
  const perLine: HarnessEvent[][] = [];
  const guard = <T>(f: () => T, fallback: T): T => {
    try {
      return f();
    } catch (error) {
      if (!thrown.includes(error)) thrown.push(error);
      return fallback;
    }
  };
  for (const line of lines) {
    perLine.push(guard(() => splitter.push(Buffer.concat([line, Buffer.from('\n')])).flatMap((l) => session.stdout(l)), []));
  }
  const end = guard(() => session.finish({ code: 0, signal: null }, reports), undefined);
  return { perLine, finish: end?.events ?? [], result: end?.summary.result, thrown };
}

export function allEvents(t: Translation): HarnessEvent[] {
  return [...t.perLine.flat(), ...t.finish];
}

export function contractViolations(t: Translation): string[] {
  const out = t.thrown.map((e) => `the translator threw: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  for (const event of allEvents(t)) {
    const parsed = HarnessEventSchema.safeParse(event);
    if (!parsed.success) out.push(`invalid event ${preview(event)}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return out;
}

/** Everything a translation reported, timestamps aside: two streams that report the same have equal outcomes. */
function outcome(t: Translation): string {
  const events = allEvents(t).map(({ timestamp: _t, ...rest }) => rest);
  return JSON.stringify({ events, result: t.result ?? null, thrown: t.thrown.length });
}

/** The record as the translator received it: a line the engine hands on as text (too deep, not JSON) is none. */
function parsed(line: Buffer): unknown {
  return parseJsonLine(line.toString('utf8'));
}

/**
 * Lines that yielded nothing, changed nothing and are no documented fold: what the harness said and we lost.
 * A byte-for-byte repeat of an earlier line says nothing new and is not counted.
 */
export function lostLines(adapter: HarnessAdapter, lines: readonly Buffer[], reports: SessionReports, folds: readonly RecordFold[], t: Translation): string[] {
  const lost: string[] = [];
  const records = lines.map(parsed);
  const reference = outcome(t);
  for (let i = 0; i < lines.length; i++) {
    if (t.perLine[i]!.length > 0 || lines[i]!.length === 0) continue;
    if (foldOf(folds, records, i)) continue;
    if (lines.slice(0, i).some((earlier) => earlier.equals(lines[i]!))) continue;
    const without = translate(adapter, [...lines.slice(0, i), ...lines.slice(i + 1)], reports);
    if (outcome(without) === reference) lost.push(`line ${i + 1} yielded no event and the stream without it reports the same: ${preview(lines[i]!.toString('utf8'))}`);
  }
  return lost;
}

/** Checks of the folds themselves on an unmutated recording: a `silent` record really yields and changes nothing. */
export function foldViolations(adapter: HarnessAdapter, lines: readonly Buffer[], reports: SessionReports, folds: readonly RecordFold[], t: Translation): string[] {
  const out: string[] = [];
  const reference = outcome(t);
  const records = lines.map(parsed);
  lines.forEach((line, i) => {
    const fold = foldOf(folds, records, i);
    if (fold?.kind !== 'silent') return;
    if (t.perLine[i]!.length > 0) out.push(`line ${i + 1} matches the silent fold "${fold.why}" but yielded ${preview(t.perLine[i])}`);
    else if (outcome(translate(adapter, [...lines.slice(0, i), ...lines.slice(i + 1)], reports)) !== reference) {
      out.push(`line ${i + 1} matches the silent fold "${fold.why}" but the stream without it reports something else`);
    }
  });
  return out;
}

type Fields = Record<string, unknown>;

/** Free-text fields may arrive in pieces (a delta stream cut or split by an unreadable record). */
const TEXT_FIELDS = new Set(['message']);
/** Relative paths are made absolute against a cwd the harness reports: without it, the path stays relative. */
const PATH_FIELDS = new Set(['path', 'working_directory']);

function compatible(m: Fields, b: Fields): boolean {
  for (const [key, value] of Object.entries(m)) {
    if (key === 'timestamp') continue;
    if (!(key in b)) return false;
    const known = b[key];
    if (value === known) continue;
    if (typeof value === 'string' && typeof known === 'string') {
      if (TEXT_FIELDS.has(key) && known.includes(value)) continue;
      if (PATH_FIELDS.has(key) && known.endsWith(`/${value}`)) continue;
    }
    return false;
  }
  return true;
}

/** Summary values that are facts (not raw copies): each the mutated stream reports must be the original's. */
function summaryFacts(result: SessionResult | undefined): Map<string, unknown> {
  const facts = new Map<string, unknown>();
  if (!result) return facts;
  for (const key of ['session_id', 'reported_cost_usd', 'reported_model', 'is_error', 'final_text'] as const) facts.set(key, result[key]);
  for (const [cls, value] of Object.entries(result.tokens ?? {})) facts.set(`tokens.${cls}`, value);
  return facts;
}

/**
 * Events and summary values of `mutated` that no reference translation reported (see the header). References are
 * the original stream and, for a damaged record, the stream without that record: what an unreadable record may
 * cost is at most that record, so a report that only the record's absence brings out (an error an earlier record
 * would have deduplicated) is no invention.
 */
export function inventions(mutated: Translation, references: readonly Translation[]): string[] {
  const out: string[] = [];
  const pools = references.map((r) => ({ events: allEvents(r) as unknown as Fields[], used: new Set<number>() }));
  const candidates = (allEvents(mutated) as unknown as Fields[])
    .filter((e) => e.type !== 'unknown' && e.type !== 'warning')
    // Most specific first, so a bare event does not take the counterpart a detailed one needs.
    .sort((a, b) => Object.keys(b).length - Object.keys(a).length);
  for (const event of candidates) {
    const found = pools.some((pool) => {
      const match = pool.events.findIndex((b, i) => !pool.used.has(i) && b.type === event.type && compatible(event, b));
      if (match !== -1) pool.used.add(match);
      return match !== -1;
    });
    if (!found) out.push(`invented event ${preview(event)}: the unmutated stream reports no such ${String(event.type)} event`);
  }
  const facts = references.map((r) => summaryFacts(r.result));
  for (const [key, value] of summaryFacts(mutated.result)) {
    if (value === undefined || value === null) continue;
    if (!facts.some((f) => f.get(key) === value)) out.push(`invented summary value ${key}=${preview(value)} (unmutated: ${preview(facts[0]!.get(key))})`);
  }
  return out;
}

export function preview(value: unknown, max = 600): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch (error) {
    text = `<${(error as Error).message}>`;
  }
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}
