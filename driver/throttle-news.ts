// Which of a run's throttles are new since the driver last looked (issue 34): each becomes one warning event with
// the provider's retry-after. Pure.
import type { GatewayThrottle } from '../shared/gateway.ts';

const keyOf = (t: GatewayThrottle) => JSON.stringify([t.provider, t.model, t.status]);

/** The rows whose count grew since `seen` (keyed counts), and `seen` advanced; rows carry how many are new. */
export function throttleNews(seen: ReadonlyMap<string, number>, now: readonly GatewayThrottle[]): { news: Array<GatewayThrottle & { added: number }>; seen: Map<string, number> } {
  const next = new Map(seen);
  const news: Array<GatewayThrottle & { added: number }> = [];
  for (const t of now) {
    const key = keyOf(t);
    const before = next.get(key) ?? 0;
    if (t.count > before) news.push({ ...t, added: t.count - before });
    next.set(key, Math.max(before, t.count));
  }
  return { news, seen: next };
}

/** The warning's text: "anthropic answered 429 for claude-sonnet-4-5 (2 times; retry after 3 s)". */
export function throttleMessage(t: GatewayThrottle & { added: number }): string {
  const retry = t.retry_after_s === null ? 'no retry-after given' : `retry after ${t.retry_after_s} s`;
  return `provider throttled: ${t.provider} answered ${t.status} for ${t.model ?? 'an unnamed model'} (${t.added === 1 ? 'once' : `${t.added} times`}; ${retry})`;
}
