// The harnesses table's pure parts: whether a harness is at its cap, and the data-* hooks of its row (browser tests
// and scripts read the numbers from these attributes, not from cell text that a layout change would move).
import type { HarnessRow } from '../../shared/console.ts';

/** At its cap: a slot count exists and every slot is taken (a cap of 0, paused, is always at cap). */
export const atCap = (h: Pick<HarnessRow, 'maxParallelism' | 'occupied'>) => h.maxParallelism !== null && h.occupied >= h.maxParallelism;

export function harnessRowData(h: HarnessRow): Record<`data-${string}`, string> {
  return {
    'data-slug': h.slug,
    'data-cap': h.maxParallelism === null ? 'unlimited' : String(h.maxParallelism),
    'data-occupied': String(h.occupied),
    'data-queued': String(h.queued),
    'data-at-cap': String(atCap(h)),
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
