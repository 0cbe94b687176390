// `tcab harnesses status [--json]`: readiness from configuration alone (spec: "Availability"): which auth mode
// each harness would use here and whether it is available, from environment variables present and
// credential files present on disk, and in api-key mode where the key goes (the model gateway's provider, or "key in
// harness" with the manifest's reason). It opens no credential file and starts nothing.
import { homedir } from 'node:os';
import type { Command } from 'commander';
import pc from 'picocolors';
import { listHarnesses } from '../../../harnesses/registry.ts';
import type { HarnessEntry } from '../../../harnesses/registry.ts';
import { resolveAuth } from '../../../shared/auth.ts';
import type { AuthInputs } from '../../../shared/auth.ts';
import { gatewayProviderFor, keyRoutesOf } from '../../../shared/gateway-route.ts';
import type { KeyRoutes } from '../../../shared/gateway-route.ts';
import type { HarnessManifest } from '../../../shared/manifest.ts';
import { credentialPresenceChecker } from '../../../driver/credentials.ts';

export interface StatusRow {
  slug: string;
  name: string;
  setting: string;
  mode: 'api-key' | 'subscription' | null;
  available: boolean;
  /** Where the key comes from, which files authenticate, or what to set or sign in to. */
  detail: string;
  /**
   * In api-key mode (or when no mode is available yet and the harness has one): where the key goes, the model
   * gateway's provider(s) or `keyInHarness` with the manifest's reason (shared/gateway-route.ts). With a key found,
   * the one provider that key is for. Absent in subscription mode.
   */
  key?: KeyRoutes;
  /**
   * In subscription mode, when runs sharing the login go one at a time (manifest `auth.subscription.serialize`,
   * issue 34): the manifest's reason. `tcab run` waits for the login's lock; a cluster claims one Run per login.
   */
  serialized?: string;
  error?: string;
}

/** Where an api-key run's key would go: the found key's provider, else every route the manifest declares. */
function keyOf(manifest: HarnessManifest, mode: StatusRow['mode'], keyVar: string | undefined): KeyRoutes | undefined {
  if (mode === 'subscription' || !manifest.auth.api_key) return undefined;
  if (keyVar === undefined) return keyRoutesOf(manifest);
  const route = gatewayProviderFor(manifest, keyVar);
  return 'provider' in route ? { gateway: [route.provider] } : route;
}

export function buildStatusRows(entries: HarnessEntry[], inputs: AuthInputs): StatusRow[] {
  return entries.map(({ manifest }) => {
    const { slug, name, auth } = manifest;
    try {
      const r = resolveAuth(auth, slug, inputs);
      if (!r.available) return withKey({ slug, name, setting: r.setting, mode: r.mode, available: false, detail: r.reason }, keyOf(manifest, r.mode, undefined));
      const detail = r.mode === 'api-key' ? `key from ${r.keyVar}, injected as ${r.injectAs}` : `signed in: ${r.files.map((f) => `~/${f}`).join(', ')}`;
      const serialized = r.mode === 'subscription' ? auth.subscription?.serialize : undefined;
      return withKey({ slug, name, setting: r.setting, mode: r.mode, available: true, detail, ...(serialized ? { serialized } : {}) }, keyOf(manifest, r.mode, r.mode === 'api-key' ? r.keyVar : undefined));
    } catch (error) {
      return { slug, name, setting: 'invalid', mode: null, available: false, detail: (error as Error).message, error: (error as Error).message };
    }
  });
}

const withKey = (row: StatusRow, key: KeyRoutes | undefined): StatusRow => (key ? { ...row, key } : row);

/** The KEY cell: "gateway: <provider>" or "key in harness" (the reasons follow the table), "-" without one. */
export const keyCell = (key: KeyRoutes | undefined) => (!key ? '-' : 'gateway' in key ? `gateway: ${key.gateway.join(' or ')}` : 'key in harness');

export function registerStatusCommand(group: Command): void {
  group
    .command('status')
    .description('which harnesses can run here, and with which credentials (configuration only; starts nothing)')
    .option('--json', 'JSON array')
    .addHelpText(
      'after',
      '\nKEY (api-key mode): "gateway: <provider>" = the harness gets the model gateway\'s URL and a per-run token, the key stays in the driver; "key in harness" = the key is in its environment, for the reason listed below the table.\n\nOne run at a time (subscription mode): a login whose refresh token rotates on use is held by one run at a time (`tcab run` waits for it, then writes the refreshed login back; a cluster claims one Run per login), for the reason listed below the table.\n\nExit status: 0 (a listing; unavailable harnesses say what to set or sign in to).',
    )
    .action((options: { json?: boolean }) => {
      const rows = buildStatusRows(listHarnesses(), { env: process.env, credentialFilePresent: credentialPresenceChecker({ kind: 'home', home: homedir() }) });
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      process.stdout.write(formatStatusTable(rows, pc.createColors(process.stdout.isTTY === true && !process.env.NO_COLOR)));
    });
}

/** The table, then why each "key in harness" keeps its key (those reasons are sentences, too long for a cell). */
export function formatStatusTable(rows: StatusRow[], c: Record<'dim' | 'yellow', (text: string) => string>): string {
  const header = ['SLUG', 'MODE', 'AVAILABLE', 'KEY', 'DETAIL'];
  const table = rows.map((r) => [r.slug, r.mode ?? '-', r.available ? 'yes' : 'no', keyCell(r.key), r.detail]);
  const widths = header.slice(0, 4).map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[], paint = (s: string) => s) => `${cells.slice(0, 4).map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}  ${paint(cells[4]!)}`;
  const out = [line(header), ...table.map((row, i) => line(row, rows[i]!.available ? c.dim : c.yellow))];
  const kept = rows.filter((r) => r.key && 'keyInHarness' in r.key);
  if (kept.length > 0) {
    const slugWidth = Math.max(...kept.map((r) => r.slug.length));
    out.push('', 'key in harness (api-key mode: the key is in the harness environment, not behind the model gateway):');
    for (const r of kept) out.push(`  ${r.slug.padEnd(slugWidth)}  ${c.dim((r.key as { keyInHarness: string }).keyInHarness)}`);
  }
  const serialized = rows.filter((r) => r.serialized);
  if (serialized.length > 0) {
    const slugWidth = Math.max(...serialized.map((r) => r.slug.length));
    out.push('', 'one run at a time (subscription mode: runs sharing the login wait for each other, and the refreshed login is written back):');
    for (const r of serialized) out.push(`  ${r.slug.padEnd(slugWidth)}  ${c.dim(r.serialized!)}`);
  }
  return `${out.join('\n')}\n`;
}
