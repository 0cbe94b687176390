// The human summary printed after a session's or run's events.
import pc from 'picocolors';
import type { TokenUsage } from '../usage.ts';

export interface SummaryInput {
  harness: string;
  result: { session_id?: string; tokens: TokenUsage | null; reported_cost_usd: number | null; reported_model?: string; is_error?: boolean };
  exit: { code: number | null; signal: string | null };
  counts: Record<string, number>;
  cost?: { canonical_model: string | null; comparable_cost_usd: number | null; actual_cost_usd: number | null; warnings: string[] };
}

function usd(value: number | null | undefined): string {
  return value === null || value === undefined ? 'unset' : `$${value.toFixed(6)}`;
}

function tokens(t: TokenUsage | null): string {
  if (!t) return 'none reported';
  const show = (n: number | null) => (n === null ? '–' : String(n));
  return `input ${show(t.input)} · output ${show(t.output)} · cache read ${show(t.cache_read)} · cache write ${show(t.cache_write)} · reasoning ${show(t.reasoning)}`;
}

export function formatSummary(input: SummaryInput, options: { color: boolean }): string {
  const c = pc.createColors(options.color);
  const exit = input.exit.signal ? `killed by ${input.exit.signal}` : `exit ${input.exit.code}`;
  const verdict = input.exit.code === 0 && input.exit.signal === null && input.result.is_error !== true ? c.green('succeeded') : c.red('failed');
  const counts = Object.entries(input.counts).map(([k, v]) => `${k} ${v}`).join(', ') || 'no events';
  const lines = [
    c.bold(`── ${input.harness} session ${verdict} (${exit})`),
    `   session id      ${input.result.session_id ?? 'not reported'}`,
    `   model           ${input.result.reported_model ?? 'not reported'}${input.cost?.canonical_model ? ` → ${input.cost.canonical_model}` : ''}`,
    `   usage           ${tokens(input.result.tokens)}`,
    `   reported cost   ${usd(input.result.reported_cost_usd)}`,
  ];
  if (input.cost) {
    lines.push(`   actual cost     ${usd(input.cost.actual_cost_usd)}`);
    lines.push(`   comparable cost ${usd(input.cost.comparable_cost_usd)}`);
    for (const w of input.cost.warnings) lines.push(c.yellow(`   warning         ${w}`));
  }
  lines.push(`   events          ${counts}`);
  return lines.join('\n');
}
