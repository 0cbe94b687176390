// `tcab harnesses list [--json]`: every harness with its strategy, binary, latest validated version, whether it runs
// offline against the stub, and the protocols the driver can speak with it (its own stdout stream; ACP where its
// manifest has [acp]), the default first.
import type { Command } from 'commander';
import { listHarnesses } from '../../../harnesses/registry.ts';

export function harnessRows() {
  return [
    ...listHarnesses().map(({ manifest: m }) => ({
      slug: m.slug,
      name: m.name,
      strategy: m.strategy,
      binary: m.binary,
      latest_validated: m.latest_validated,
      offline: m.stub_wire !== undefined,
      protocols: m.acp ? (m.acp.default ? ['acp', 'stdout'] : ['stdout', 'acp']) : ['stdout'],
    })),
  ];
}

export function registerListCommand(group: Command): void {
  group
    .command('list')
    .description('list the harnesses tcab can run')
    .option('--json', 'JSON array')
    .action((options: { json?: boolean }) => {
      const rows = harnessRows();
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const header = ['SLUG', 'NAME', 'STRATEGY', 'BINARY', 'LATEST VALIDATED', 'OFFLINE', 'PROTOCOLS'];
      const table = [header, ...rows.map((r) => [r.slug, r.name, r.strategy, r.binary, r.latest_validated, r.offline ? 'yes' : 'no', r.protocols.join(', ')])];
      const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
    });
}
