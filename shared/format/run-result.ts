// Human view of a run result, printed after the run's events.
import pc from 'picocolors';
import type { RunResult } from '../run.ts';
import type { TokenUsage } from '../usage.ts';

const usd = (v: number | null) => (v === null ? 'unset' : `$${v.toFixed(6)}`);
const n = (v: number | null) => (v === null ? '–' : String(v));
const tokens = (t: TokenUsage | null) =>
  t ? `input ${n(t.input)} · output ${n(t.output)} · cache read ${n(t.cache_read)} · cache write ${n(t.cache_write)} · reasoning ${n(t.reasoning)}` : 'none reported';

/** The test case's verdict: passed or failed, its exit, its reward when it wrote one, and how long it took. */
function checkLine(check: RunResult['check'], c: ReturnType<typeof pc.createColors>): string {
  if (!check) return c.dim('did not run');
  const verdict = check.passed ? c.green('passed') : c.red('failed');
  const reward = check.reward === null ? '' : ` · reward ${check.reward}`;
  const last = check.passed ? '' : check.output_tail.split('\n').at(-1);
  return `${verdict} (exit ${check.exit_code ?? '–'}${reward}) in ${(check.duration_ms / 1000).toFixed(1)}s${last ? c.dim(` — ${last}`) : ''}`;
}

export function formatRunResult(r: RunResult, options: { color: boolean }): string {
  const c = pc.createColors(options.color);
  const verdict = r.outcome === 'succeeded' ? c.green(r.outcome) : c.red(r.outcome);
  const lines = [
    c.bold(`── run ${r.run_id}: ${verdict}`) + (r.message ? ` — ${r.message}` : ''),
    `   harness         ${r.harness_slug} ${r.harness_version ?? '(version unknown)'}${r.auth_mode ? ` · ${r.auth_mode}` : ''}`,
    `   model           ${r.model}${r.canonical_model ? ` → ${r.canonical_model}` : ' (not in the catalogue)'}`,
    `   sessions        ${r.session_ids.length > 0 ? r.session_ids.join(', ') : r.sessions.length === 0 ? 'none ran' : 'no session id reported'}`,
    `   exit status     ${r.exit_code ?? '–'}`,
    `   usage           ${tokens(r.tokens)}`,
    `   reported cost   ${usd(r.reported_cost_usd)}`,
    `   actual cost     ${usd(r.actual_cost_usd)}`,
    `   comparable cost ${usd(r.comparable_cost_usd)}${r.catalog_version ? c.dim(` (catalogue ${r.catalog_version})`) : ''}`,
    // What the model gateway measured (issue 34): the provider's own numbers, independent of the harness process.
    `   on the wire     ${r.wire ? `${tokens(r.wire.tokens)} · ${usd(r.wire.cost_usd)} · ${r.wire.requests} request(s)${r.wire.throttled ? `, ${r.wire.throttled} throttled` : ''}${r.wire.refused ? `, ${r.wire.refused} refused (budget)` : ''}` : c.dim('no gateway (key in harness)')}`,
    `   stages          ${r.stages.map((s) => `${s.stage} ${(s.duration_ms / 1000).toFixed(1)}s${s.status === 'failed' ? ' ✗' : ''}`).join(' · ')}`,
  ];
  if (r.check !== undefined) lines.push(`   check           ${checkLine(r.check, c)}`);
  for (const w of r.cost_warnings) lines.push(c.yellow(`   warning         ${w}`));
  return lines.join('\n');
}
