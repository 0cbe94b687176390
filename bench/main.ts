// `npm run bench`: every benchmark, one JSON document on stdout (progress on stderr).
// Targets are reported next to the figures; the bench measures, it does not fail a build.
import { join } from 'node:path';
import { benchPeakRss, benchTranslation } from './translation.ts';
import { benchNatsLatency } from './nats-latency.ts';

const ROOT = join(import.meta.dirname, '..');
const only = process.argv.slice(2);
const want = (name: string) => only.length === 0 || only.includes(name);
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const report: Record<string, unknown> = { started_at: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length };

if (want('translation')) {
  log('translation throughput (claude transcript replicated to 100 MB)');
  const claude = join(ROOT, 'harnesses/claude/fixtures/claude-2.1.197-stream-json.jsonl');
  const t = await benchTranslation('claude', claude);
  report.translation = { ...t, target_ratio: 0.5, meets_target: t.ratio_to_json_parse >= 0.5 };
  log('peak RSS translating a 1 GB stream');
  const rss = benchPeakRss('claude', claude, 1);
  report.translation_peak_rss = { ...rss, target_mb: 150, meets_target: rss.peak_rss_mb < 150 };
}

if (want('nats')) {
  log('harness line -> NATS subscriber latency vs raw NATS, events/s through one driver');
  report.nats = await benchNatsLatency();
}

report.finished_at = new Date().toISOString();
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
