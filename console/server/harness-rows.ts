// The harnesses page's rows: per harness its cap, the slots its Runs hold and the Runs it queues, kept as counts
// updated per row change (not a walk over 100k rows per change), plus the version the last started run installed
// and where its API key goes (the model gateway, or key in harness: from its manifest, through the catalogue).
import { DEFAULT_HARNESS_CONFIG } from '../../shared/harness-config.ts';
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';
import type { HarnessRow, RunRow, ThrottleHoldRow } from '../../shared/console.ts';
import type { HarnessCatalog } from './sources.ts';

const HOLDS_SLOT: ReadonlySet<RunRow['phase']> = new Set(['Dispatched', 'Starting', 'Running', 'Checking']);

interface Tally {
  occupied: number;
  queued: number;
  lastStart?: string;
  lastVersion?: string;
}

export class HarnessTally {
  private readonly byHarness = new Map<string, Tally>();

  private tally(harness: string): Tally {
    let t = this.byHarness.get(harness);
    if (!t) this.byHarness.set(harness, (t = { occupied: 0, queued: 0 }));
    return t;
  }

  private count(row: RunRow, by: 1 | -1): void {
    const t = this.tally(row.harness);
    if (HOLDS_SLOT.has(row.phase)) t.occupied += by;
    else if (row.phase === 'Pending') t.queued += by;
  }

  /** A row replaced `before` (undefined: new) or was removed (`after` undefined). Returns the harness(es) touched. */
  change(before: RunRow | undefined, after: RunRow | undefined): string[] {
    if (before) this.count(before, -1);
    if (after) {
      this.count(after, 1);
      const t = this.tally(after.harness);
      if (after.harnessVersion && after.startedAt && (!t.lastStart || after.startedAt >= t.lastStart)) {
        t.lastStart = after.startedAt;
        t.lastVersion = after.harnessVersion;
      }
    }
    return [...new Set([before?.harness, after?.harness].filter((h): h is string => h !== undefined))];
  }

  get(harness: string): Readonly<Tally> {
    return this.byHarness.get(harness) ?? { occupied: 0, queued: 0 };
  }
}

/**
 * `holds`: every provider+model held now (provider back-pressure); the row shows those of the providers its key goes
 * to through the gateway.
 */
export function harnessRow(entry: ReturnType<HarnessCatalog['list']>[number], configs: ReadonlyMap<string, HarnessConfigSpec>, tally: Readonly<Tally>, catalog: HarnessCatalog, holds: readonly ThrottleHoldRow[] = []): HarnessRow {
  const config = configs.get(entry.slug);
  const row: HarnessRow = {
    slug: entry.slug,
    maxParallelism: (config ?? DEFAULT_HARNESS_CONFIG).maxParallelism,
    default: config === undefined,
    occupied: tally.occupied,
    queued: tally.queued,
    readiness: catalog.readiness(entry.slug),
  };
  if (entry.displayName) row.displayName = entry.displayName;
  if (tally.lastVersion) row.lastInstalledVersion = tally.lastVersion;
  if (entry.key) row.key = entry.key;
  const providers = entry.key && 'gateway' in entry.key ? entry.key.gateway : [];
  const own = holds.filter((h) => providers.includes(h.provider));
  if (own.length > 0) row.holds = own;
  return row;
}
