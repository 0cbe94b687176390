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
  translate: { seconds: number; lines_per_s: number; mb_per_s: number; events: number };
  json_parse: { seconds: number; lines_per_s: number; mb_per_s: number };
  ratio_to_json_parse: number;
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

async function timeJsonParse(path: string): Promise<number> {
  const start = process.hrtime.bigint();
  let sink = 0;
  for await (const line of splitLines(createReadStream(path, { highWaterMark: 1 << 20 }))) {
    if (line.text.length > 0) sink += JSON.parse(line.text) === null ? 0 : 1;
  }
  if (sink < 0) console.log(sink);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function timeTranslate(harness: string, path: string): Promise<{ seconds: number; events: number }> {
  const adapter = await loadAdapter(harness);
  const start = process.hrtime.bigint();
  const session = new TranslationSession(adapter, { workdir: '/bench' });
  let events = 0;
  for await (const line of splitLines(createReadStream(path, { highWaterMark: 1 << 20 }))) events += session.stdout(line).length;
  events += session.finish({ code: 0, signal: null }).events.length;
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, events };
}

export async function benchTranslation(harness: string, fixture: string, targetBytes = 100 * 1024 * 1024): Promise<ThroughputResult> {
  const data = replicate(fixture, targetBytes);
  try {
    // Warm both paths once on the same file (JIT), then measure each; take the best of two to damp noise.
    await timeJsonParse(data.path);
    const parse = Math.min(await timeJsonParse(data.path), await timeJsonParse(data.path));
    const t1 = await timeTranslate(harness, data.path);
    const t2 = await timeTranslate(harness, data.path);
    const translate = t1.seconds < t2.seconds ? t1 : t2;
    const mb = data.bytes / (1024 * 1024);
    return {
      harness,
      fixture: fixture.replace(`${ROOT}/`, ''),
      bytes: data.bytes,
      lines: data.lines,
      translate: { seconds: translate.seconds, lines_per_s: Math.round(data.lines / translate.seconds), mb_per_s: +(mb / translate.seconds).toFixed(1), events: translate.events },
      json_parse: { seconds: parse, lines_per_s: Math.round(data.lines / parse), mb_per_s: +(mb / parse).toFixed(1) },
      ratio_to_json_parse: +(parse / translate.seconds).toFixed(3),
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
