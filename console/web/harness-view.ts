// The harnesses table's pure parts: whether a harness is at its cap, the data-* hooks of its row (browser tests
// and scripts read the numbers from these attributes, not from cell text that a layout change would move), and how
// its readiness and key cells read.
import type { HarnessRow, ThrottleHoldRow } from '../../shared/console.ts';
import { formatClock, formatDuration } from './format.ts';

/** At its cap: a slot count exists and every slot is taken (a cap of 0, paused, is always at cap). */
export const atCap = (h: Pick<HarnessRow, 'maxParallelism' | 'occupied'>) => h.maxParallelism !== null && h.occupied >= h.maxParallelism;

export function harnessRowData(h: HarnessRow): Record<`data-${string}`, string> {
  return {
    'data-slug': h.slug,
    'data-cap': h.maxParallelism === null ? 'unlimited' : String(h.maxParallelism),
    'data-occupied': String(h.occupied),
    'data-queued': String(h.queued),
    'data-at-cap': String(atCap(h)),
    'data-key': keyLabel(h.key).route,
    // Only when some are: a harness without holds carries no attribute for them.
    ...(h.holds && h.holds.length > 0 ? { 'data-held': h.holds.map((x) => `${x.provider}/${x.model ?? '*'}`).join(' ') } : {}),
  };
}

/**
 * How a hold reads (provider back-pressure): "anthropic claude-x: held until 14:03:07 (in 25 s), level 2, 429,
 * retry-after 30 s"; a hold whose end has passed (the next update removes it) reads "resuming".
 */
export function holdLabel(hold: ThrottleHoldRow, nowMs: number): { text: string; title: string } {
  const left = Date.parse(hold.heldUntil) - nowMs;
  const what = `${hold.provider} ${hold.model ?? '(every model)'}`;
  const when = left > 0 ? `held until ${formatClock(hold.heldUntil, nowMs)} (in ${formatDuration(left)})` : 'resuming';
  const retry = hold.retryAfterS === null ? 'no retry-after' : `retry-after ${hold.retryAfterS} s`;
  return {
    text: `${what}: ${when}, level ${hold.level}, ${hold.status}, ${retry}`,
    title: `The model gateway saw ${hold.count} throttled answer(s) of ${what} lately: its queued Runs wait (the hold doubles per level, up to its cap, and ends early once the provider answers again); Runs of other models keep starting`,
  };
}

/**
 * How the readiness cell reads. `unknown` is its own tone: `tcab console` on a workstation cannot see the
 * dispatcher's Secrets, and a red "not ready" there would be a false alarm.
 */
export function readinessLabel(r: HarnessRow['readiness']): { tone: 'ok' | 'fail' | 'unknown'; text: string } {
  if (r.ready) return { tone: 'ok', text: `✓ ready${r.mode ? ` (${r.mode})` : ''}` };
  if (r.unknown !== undefined) return { tone: 'unknown', text: `? unknown here: ${r.unknown}` };
  return { tone: 'fail', text: `✗ not ready${r.missing.length > 0 ? `: missing ${r.missing.join(', ')}` : ''}` };
}

/**
 * How the key cell reads (api-key mode): "gateway (<provider>)" when the harness gets the model gateway's URL and a
 * per-run token instead of the key, "key in harness" with the manifest's reason as the tooltip, "—" without an
 * API-key mode.
 */
export function keyLabel(key: HarnessRow['key']): { route: 'gateway' | 'key-in-harness' | 'none'; text: string; title: string } {
  if (!key) return { route: 'none', text: '—', title: 'no API-key mode' };
  if ('gateway' in key) {
    return { route: 'gateway', text: `gateway (${key.gateway.join(', ')})`, title: `API-key mode: the harness gets the model gateway's URL (${key.gateway.map((p) => `/p/${p}`).join(' or ')}) and a per-run token; the key stays in the driver` };
  }
  return { route: 'key-in-harness', text: 'key in harness', title: `API-key mode: the key is in the harness's environment, not behind the model gateway: ${key.keyInHarness}` };
}
