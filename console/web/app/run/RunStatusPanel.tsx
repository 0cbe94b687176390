// What the Run's status and result add to the header: where it ran, how it authenticated, what it could reach
// outside the cluster (its egress profile and hosts), its conditions and its sessions (exit code, duration,
// tokens), so "what happened" needs no kubectl.
import type { RunResult } from '../../../../shared/run.ts';
import { formatClock, formatCount, formatDuration, totalTokens } from '../../format.ts';
import type { RunInfo } from './store.ts';

/** A profile's hosts in words: `*` is any public host, none is nothing outside the cluster. */
export function egressHosts(hosts: readonly string[]): string {
  if (hosts.includes('*')) return 'any public host';
  return hosts.length ? hosts.join(', ') : 'no host outside the cluster';
}

export function RunStatusPanel({ status, result, nowMs }: { status: RunInfo['status']; result: RunResult | null; nowMs: number }) {
  const facts: Array<[string, string | undefined]> = [
    ['Pod', status?.pod],
    ['Auth mode', status?.authMode ?? result?.auth_mode ?? undefined],
    ['Canonical model', status?.canonicalModel ?? result?.canonical_model ?? undefined],
    ['Session ids', (status?.sessionIds ?? result?.session_ids)?.join(', ') || undefined],
    ['Events', result ? result.event_count.toLocaleString('en-US') : undefined],
    ['Egress', status?.egress ? `${status.egress.profile}: ${egressHosts(status.egress.hosts)}` : undefined],
  ];
  const conditions = status?.conditions ?? [];
  if (!facts.some(([, v]) => v) && conditions.length === 0 && !result?.sessions.length) return null;
  return (
    <section aria-labelledby="status-title" class="panel">
      <h2 id="status-title">Status</h2>
      <dl class="kv">
        {facts
          .filter(([, v]) => v)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
      {conditions.length > 0 && (
        <table class="facts conditions">
          <caption>Conditions</caption>
          <tbody>
            {conditions.map((c) => (
              <tr key={c.type}>
                <th scope="row">{c.type}</th>
                <td>
                  {c.status}
                  {c.reason && <span class="muted small"> · {c.reason}</span>}
                  {c.message && <div class="small">{c.message}</div>}
                </td>
                <td class="num small">{formatClock(c.lastTransitionTime, nowMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result && result.sessions.length > 0 && (
        <table class="facts sessions">
          <caption>Sessions</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Exit</th>
              <th scope="col" class="num">Duration</th>
              <th scope="col" class="num">Tokens</th>
            </tr>
          </thead>
          <tbody>
            {result.sessions.map((s) => (
              <tr key={s.index}>
                <th scope="row">{s.index + 1}</th>
                <td class={s.exit_code === 0 && s.is_error !== true ? 'ok-text' : 'fail-text'}>
                  {s.exit_code ?? s.signal ?? '—'}
                  {s.is_error === true && ' (error reported)'}
                </td>
                <td class="num">{formatDuration(s.duration_ms)}</td>
                <td class="num">{formatCount(totalTokens(s.tokens))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
