// Translation throughput on a recorded transcript replicated to >= 100 MB, next to the raw JSON.parse-per-line
// rate on the same data in the same run, and peak RSS while translating a 1 GB stream (in a child process, so
// its max RSS is the translation's alone).
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { splitLines } from '../shared/translate/lines.ts';
import { TranslationSession } from '../shared/translate/session.ts';
import { loadAdapter } from '../harnesses/registry.ts';

const ROOT = join(import.meta.dirname, '..');

export interface ThroughputResult {
  harness: string;
  fixture: string;
  bytes: number;
  lines: number;
  translate: { seconds: number; cpu_seconds: number; lines_per_s: number; mb_per_s: number; events: number };
  json_parse: { seconds: number; cpu_seconds: number; lines_per_s: number; mb_per_s: number };
  /** Wall time: what a caller sees on an idle machine. */
  ratio_to_json_parse: number;
  /** CPU time of this process (process.cpuUsage): the same comparison, unaffected by other load on the machine. */
  cpu_ratio_to_json_parse: number;
}

interface Timing {
  seconds: number;
  cpuSeconds: number;
}

function startTimer(): () => Timing {
  const wall = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { seconds: Number(process.hrtime.bigint() - wall) / 1e9, cpuSeconds: (used.user + used.system) / 1e6 };
  };
}

/** Writes the fixture repeated until the file is at least `targetBytes`. */
export function replicate(fixture: string, targetBytes: number): { path: string; dir: string; bytes: number; lines: number } {
  const text = readFileSync(fixture, 'utf8').replace(/\n?$/, '\n');
  const copies = Math.ceil(targetBytes / Buffer.byteLength(text));
  const dir = mkdtempSync(join(tmpdir(), 'tcab-bench-'));
  const path = join(dir, 'transcript.jsonl');
  writeFileSync(path, text.repeat(copies));
  const linesPerCopy = text.split('\n').length - 1;
  return { path, dir, bytes: Buffer.byteLength(text) * copies, lines: linesPerCopy * copies };
}

async function timeJsonParse(path: string): Promise<Timing> {
  const stop = startTimer();
  let sink = 0;
  for await (const line of splitLines(createReadStream(path, { highWaterMark: 1 << 20 }))) {
    if (line.text.length > 0) sink += JSON.parse(line.text) === null ? 0 : 1;
  }
  if (sink < 0) console.log(sink);
  return stop();
}

async function timeTranslate(harness: string, path: string): Promise<Timing & { events: number }> {
  const adapter = await loadAdapter(harness);
  const stop = startTimer();
  const session = new TranslationSession(adapter, { workdir: '/bench' });
  let events = 0;
  for await (const line of splitLines(createReadStream(path, { highWaterMark: 1 << 20 }))) events += session.stdout(line).length;
  events += session.finish({ code: 0, signal: null }).events.length;
  return { ...stop(), events };
}

/** Best (lowest) of each measure over the runs: noise only ever adds time. */
const best = <T extends Timing>(runs: T[]): T & Timing => ({ ...runs[0]!, seconds: Math.min(...runs.map((r) => r.seconds)), cpuSeconds: Math.min(...runs.map((r) => r.cpuSeconds)) });

export async function benchTranslation(harness: string, fixture: string, targetBytes = 100 * 1024 * 1024): Promise<ThroughputResult> {
  const data = replicate(fixture, targetBytes);
  try {
    // Warm both paths once on the same file (JIT), then measure each, alternating; take the best of three.
    await timeJsonParse(data.path);
    await timeTranslate(harness, data.path);
    const parses: Timing[] = [];
    const translations: (Timing & { events: number })[] = [];
    for (let i = 0; i < 3; i++) {
      parses.push(await timeJsonParse(data.path));
      translations.push(await timeTranslate(harness, data.path));
    }
    const parse = best(parses);
    const translate = best(translations);
    const mb = data.bytes / (1024 * 1024);
    return {
      harness,
      fixture: fixture.replace(`${ROOT}/`, ''),
      bytes: data.bytes,
      lines: data.lines,
      translate: { seconds: translate.seconds, cpu_seconds: translate.cpuSeconds, lines_per_s: Math.round(data.lines / translate.seconds), mb_per_s: +(mb / translate.seconds).toFixed(1), events: translate.events },
      json_parse: { seconds: parse.seconds, cpu_seconds: parse.cpuSeconds, lines_per_s: Math.round(data.lines / parse.seconds), mb_per_s: +(mb / parse.seconds).toFixed(1) },
      ratio_to_json_parse: +(parse.seconds / translate.seconds).toFixed(3),
      cpu_ratio_to_json_parse: +(parse.cpuSeconds / translate.cpuSeconds).toFixed(3),
    };
  } finally {
    rmSync(data.dir, { recursive: true, force: true });
  }
}

/** The Node flags the driver runs with, read from its executable's shebang so the bench measures the same. */
export function driverNodeFlags(): string[] {
  const shebang = readFileSync(join(ROOT, 'bin', 'tcab-driver.js'), 'utf8').split('\n')[0] ?? '';
  return shebang.split(/\s+/).filter((w) => w.startsWith('--'));
}

/**
 * Peak RSS (MB) of a child translating `count` lines of 8 MiB (Claude text messages just under the line cap, each
 * parsed, translated and serialized): what the engine holds per line, and that it holds no line longer than it
 * needs (the failure tail once kept 64 of them).
 */
export function benchBigLineRss(harness: string, count = 100): { harness: string; lines: number; bytes: number; peak_rss_mb: number; seconds: number; node_flags: string[] } {
  const flags = driverNodeFlags();
  const out = execFileSync(process.execPath, [...flags, join(import.meta.dirname, 'translate-rss-child.ts'), harness, '--big-lines', String(count)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const { lines, bytes, peak_rss_mb, seconds } = JSON.parse(out) as { lines: number; bytes: number; peak_rss_mb: number; seconds: number };
  return { harness, lines, bytes, peak_rss_mb, seconds, node_flags: flags };
}

/** Peak RSS (MB) of a child translating `gigabytes` of the fixture streamed through a pipe, never on disk. */
export function benchPeakRss(harness: string, fixture: string, gigabytes = 1): { harness: string; bytes: number; peak_rss_mb: number; seconds: number; node_flags: string[] } {
  const flags = driverNodeFlags();
  const out = execFileSync(process.execPath, [...flags, join(import.meta.dirname, 'translate-rss-child.ts'), harness, fixture, String(gigabytes)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return { ...(JSON.parse(out) as { harness: string; bytes: number; peak_rss_mb: number; seconds: number }), node_flags: flags };
}
