// `tcab harnesses status [--json]`: readiness from configuration alone (spec: "Availability"): which auth mode
// each harness would use here and whether it is available, from environment variables present and
// credential files present on disk. It opens no credential file and starts nothing.
import { homedir } from 'node:os';
import type { Command } from 'commander';
import pc from 'picocolors';
import { listHarnesses } from '../../../harnesses/registry.ts';
import type { HarnessEntry } from '../../../harnesses/registry.ts';
import { resolveAuth } from '../../../shared/auth.ts';
import type { AuthInputs } from '../../../shared/auth.ts';
import { credentialPresenceChecker } from '../../../driver/credentials.ts';

export interface StatusRow {
  slug: string;
  name: string;
  setting: string;
  mode: 'api-key' | 'subscription' | null;
  available: boolean;
  /** Where the key comes from, which files authenticate, or what to set or sign in to. */
  detail: string;
  error?: string;
}

export function buildStatusRows(entries: HarnessEntry[], inputs: AuthInputs): StatusRow[] {
  return entries.map(({ manifest: { slug, name, auth } }) => {
    try {
      const r = resolveAuth(auth, slug, inputs);
      if (!r.available) return { slug, name, setting: r.setting, mode: r.mode, available: false, detail: r.reason };
      const detail = r.mode === 'api-key' ? `key from ${r.keyVar}, injected as ${r.injectAs}` : `signed in: ${r.files.map((f) => `~/${f}`).join(', ')}`;
      return { slug, name, setting: r.setting, mode: r.mode, available: true, detail };
    } catch (error) {
      return { slug, name, setting: 'invalid', mode: null, available: false, detail: (error as Error).message, error: (error as Error).message };
    }
  });
}

export function registerStatusCommand(group: Command): void {
  group
    .command('status')
    .description('which harnesses can run here, and with which credentials (configuration only; starts nothing)')
    .option('--json', 'JSON array')
    .addHelpText('after', '\nExit status: 0 (a listing; unavailable harnesses say what to set or sign in to).')
    .action((options: { json?: boolean }) => {
      const rows = buildStatusRows(listHarnesses(), { env: process.env, credentialFilePresent: credentialPresenceChecker({ kind: 'home', home: homedir() }) });
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const c = pc.createColors(process.stdout.isTTY === true && !process.env.NO_COLOR);
      const header = ['SLUG', 'MODE', 'AVAILABLE', 'DETAIL'];
      const table = rows.map((r) => [r.slug, r.mode ?? '-', r.available ? 'yes' : 'no', r.detail]);
      const widths = header.slice(0, 3).map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
      const line = (cells: string[], paint = (s: string) => s) => `${cells.slice(0, 3).map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}  ${paint(cells[3]!)}`;
      process.stdout.write(`${line(header)}\n`);
      for (const [i, row] of table.entries()) process.stdout.write(`${line(row, rows[i]!.available ? c.dim : c.yellow)}\n`);
    });
}
