// Pure formatters of the console's numbers and times (no DOM: unit-tested, and shared by every page).
import type { TokenUsage } from '../../shared/usage.ts';

export const DASH = '—';

/** A duration the way an operator reads it: "850 ms", "12.3 s", "4m 05s", "2h 03m", "3d 04h". */
export function formatDuration(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || !Number.isFinite(ms) || ms < 0) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.floor(s)} s`;
  const total = Math.floor(s);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (total < 3600) return `${Math.floor(total / 60)}m ${pad(total % 60)}s`;
  if (total < 86_400) return `${Math.floor(total / 3600)}h ${pad(Math.floor((total % 3600) / 60))}m`;
  return `${Math.floor(total / 86_400)}d ${pad(Math.floor((total % 86_400) / 3600))}h`;
}

/** Idle time, compact and in whole seconds (it ticks every second): "7s", "4m 05s". */
export function formatIdle(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return DASH;
  return seconds < 60 ? `${Math.max(0, Math.floor(seconds))}s` : formatDuration(seconds * 1000);
}

/** USD with enough digits to tell small runs apart: "$0.0042", "$0.37", "$12.40"; unknown cost is a dash. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === undefined || usd === null || !Number.isFinite(usd)) return DASH;
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(2)}`;
}

/** A check's verdict in a table cell: "passed", "failed · 0.25" (its reward to 2 decimals, when it wrote one), or a dash. */
export function formatCheck(check: { passed: boolean; reward: number | null } | undefined): string {
  if (!check) return DASH;
  const verdict = check.passed ? 'passed' : 'failed';
  return check.reward === null ? verdict : `${verdict} · ${check.reward.toFixed(2)}`;
}

/** A token count: exact up to 9,999, then 12.3k / 4.56M. */
export function formatCount(n: number | null | undefined): string {
  if (n === undefined || n === null) return DASH;
  if (n < 10_000) return n.toLocaleString('en-US');
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

/** Tokens the run moved: every prompt class plus output (reasoning is inside output, never added again). */
export function totalTokens(usage: TokenUsage | null | undefined): number | undefined {
  if (!usage) return undefined;
  const parts = [usage.input, usage.output, usage.cache_read, usage.cache_write];
  if (parts.every((p) => p === null)) return undefined;
  return parts.reduce<number>((sum, p) => sum + (p ?? 0), 0);
}

/** ":12-40", ":12", ":12-" or "" for a file operation's line range. */
export function lineRange(start: number | undefined, end: number | undefined): string {
  if (start === undefined && end === undefined) return '';
  if (end === undefined || end === start) return `:${start}`;
  if (start === undefined) return `:1-${end}`;
  return `:${start}-${end}`;
}

/** Milliseconds since the epoch, or undefined for a missing or unparsable time. */
export function toMs(iso: string | undefined | null): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** "14:03:07" in the browser's time zone, with the date in front when it is not today. */
export function formatClock(iso: string | undefined, nowMs: number): string {
  const ms = toMs(iso);
  if (ms === undefined) return DASH;
  const d = new Date(ms);
  const time = d.toLocaleTimeString('en-GB', { hour12: false });
  const sameDay = new Date(nowMs).toDateString() === d.toDateString();
  return sameDay ? time : `${d.toISOString().slice(0, 10)} ${time}`;
}

/** formatClock for a narrow table cell: "14:03:07" today, else "11-30 14:03" (month-day, local; title has the rest). */
export function formatClockShort(iso: string | undefined, nowMs: number): string {
  const ms = toMs(iso);
  if (ms === undefined) return DASH;
  const d = new Date(ms);
  if (new Date(nowMs).toDateString() === d.toDateString()) return formatClock(iso, nowMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An event's offset from the run's start: "+0:07.2", "+12:01.0", "+1:02:03". */
export function formatOffset(iso: string | undefined, startMs: number | undefined): string {
  const ms = toMs(iso);
  if (ms === undefined || startMs === undefined) return '';
  const d = Math.max(0, ms - startMs);
  const h = Math.floor(d / 3_600_000);
  const m = Math.floor((d % 3_600_000) / 60_000);
  const s = (d % 60_000) / 1000;
  const sec = s.toFixed(1).padStart(4, '0');
  return h > 0 ? `+${h}:${String(m).padStart(2, '0')}:${sec.slice(0, 2)}` : `+${m}:${sec}`;
}
