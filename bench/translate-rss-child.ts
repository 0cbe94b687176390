// Child of the RSS benchmarks: translates a stream generated on the fly (never on disk) and prints its own peak
// RSS. Runs alone in its process so the figure is the translation's.
//   translate-rss-child.ts <harness> <fixture> <gigabytes>   the fixture replicated to N GB
//   translate-rss-child.ts <harness> --big-lines <count>     <count> Claude text messages of 8 MiB each (just
//                                                            under the line cap, so each is parsed and translated)
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { DEFAULT_MAX_LINE_BYTES, splitLines } from '../shared/translate/lines.ts';
import { TranslationSession } from '../shared/translate/session.ts';
import { loadAdapter } from '../harnesses/registry.ts';

const [harness = 'claude', source = '', size = '1'] = process.argv.slice(2);
const bigLines = source === '--big-lines';

function* replicated(): Generator<Buffer> {
  const chunk = Buffer.from(readFileSync(source, 'utf8').replace(/\n?$/, '\n').repeat(64));
  const total = Number(size) * 1024 ** 3;
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk;
}

function* eightMiBLines(): Generator<Buffer> {
  const head = '{"type":"assistant","message":{"content":[{"type":"text","text":"';
  const tail = '"}]},"session_id":"bench-big-lines"}\n';
  const line = Buffer.from(head + 'x'.repeat(DEFAULT_MAX_LINE_BYTES - head.length - tail.length + 1) + tail);
  // One Buffer reused, 1 MiB at a time, as a pipe delivers it.
  for (let i = 0; i < Number(size); i++) for (let at = 0; at < line.length; at += 1 << 20) yield line.subarray(at, at + (1 << 20));
}

const adapter = await loadAdapter(harness);
const session = new TranslationSession(adapter, { workdir: '/bench' });
const start = Date.now();
let events = 0;
let bytes = 0;
let lines = 0;
let serialized = 0;
for await (const line of splitLines(Readable.from(bigLines ? eightMiBLines() : replicated()))) {
  bytes += line.bytes + 1;
  lines += 1;
  for (const event of session.stdout(line)) {
    events += 1;
    // What every sink does with an event; the big-lines figure includes it.
    if (bigLines) serialized += JSON.stringify(event).length;
  }
}
session.finish({ code: 0, signal: null });
const peak = +(process.resourceUsage().maxRSS / 1024).toFixed(1);
process.stdout.write(JSON.stringify({ harness, bytes, lines, events, ...(bigLines ? { serialized_chars: serialized } : {}), peak_rss_mb: peak, seconds: (Date.now() - start) / 1000 }));
