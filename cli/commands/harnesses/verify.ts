// `tcab harnesses verify <slug>|--all [--json] [--record]`: catch a release that broke an adapter before a user
// does. Exit 5 when any harness drifted.
import type { Command } from 'commander';
import pc from 'picocolors';
import { getHarness, listHarnesses } from '../../../harnesses/registry.ts';
import { verifyHarness } from '../../../driver/verify/run-scenarios.ts';
import type { HarnessVerifyReport } from '../../../driver/verify/run-scenarios.ts';
import { InvalidInputError } from '../../../shared/errors.ts';
import { EXIT } from '../../../shared/exit-codes.ts';

function formatReport(r: HarnessVerifyReport, color: boolean): string {
  const c = pc.createColors(color);
  const verdict = r.verdict === 'pass' ? c.green('pass') : r.verdict === 'fail' ? c.red('FAIL') : c.dim('skipped');
  const lines = [`${c.bold(r.harness)} ${verdict}${r.reason ? c.dim(` — ${r.reason}`) : ''}`];
  for (const s of r.scenarios) {
    const counts = Object.entries(s.counts).map(([k, v]) => `${k} ${v}`).join(', ');
    lines.push(`  ${s.verdict === 'pass' ? c.green('✓') : c.red('✗')} ${s.scenario} ${c.dim(`(${s.harness_version ?? '?'}, ${s.outcome})`)} ${counts}`);
    for (const p of s.problems) lines.push(`      ${c.red(p)}`);
    for (const sample of s.unknown.samples) lines.push(`      ${c.dim(`unknown: ${JSON.stringify(sample).slice(0, 160)}`)}`);
  }
  for (const f of r.recorded) lines.push(c.dim(`  recorded ${f}`));
  return lines.join('\n');
}

export function registerVerifyCommand(group: Command): void {
  group
    .command('verify')
    .description('install the newest release, run the scripted stub scenarios, report drift')
    .argument('[slug]', 'harness to verify')
    .option('--all', 'every harness that can run offline')
    .option('--json', 'one JSON array of reports')
    .option('--record', "save each scenario's raw output as a fixture (harnesses/<slug>/fixtures/)")
    .addHelpText('after', '\nExit status: 0 every verified harness passed (skipped ones do not count), 5 drift found.')
    .action(async (slug: string | undefined, options: { all?: boolean; json?: boolean; record?: boolean }) => {
      if (!slug === !options.all) throw new InvalidInputError('verify', 'give a harness slug or --all');
      const entries = options.all ? listHarnesses() : [getHarness(slug!)];
      const reports: HarnessVerifyReport[] = [];
      for (const entry of entries) {
        const report = await verifyHarness(entry, { env: process.env, record: options.record, onProgress: (l) => process.stderr.write(`verify: ${l}\n`) });
        reports.push(report);
        if (!options.json) process.stdout.write(`${formatReport(report, process.stdout.isTTY === true)}\n`);
      }
      if (options.json) process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
      process.exitCode = reports.some((r) => r.verdict === 'fail') ? EXIT.verifyFailed : EXIT.ok;
    });
}
