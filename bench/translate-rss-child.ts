// Child of the RSS benchmark: translates N GB of a replicated transcript generated on the fly and prints its own
// peak RSS. Runs alone in its process so the figure is the translation's.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { splitLines } from '../shared/translate/lines.ts';
import { TranslationSession } from '../shared/translate/session.ts';
import { loadAdapter } from '../harnesses/registry.ts';

const [harness = 'claude', fixture = '', gigabytes = '1'] = process.argv.slice(2);
const chunk = Buffer.from(readFileSync(fixture, 'utf8').replace(/\n?$/, '\n').repeat(64));
const total = Number(gigabytes) * 1024 ** 3;

function* generate(): Generator<Buffer> {
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk;
}

const adapter = await loadAdapter(harness);
const session = new TranslationSession(adapter, { workdir: '/bench' });
const start = Date.now();
let events = 0;
let bytes = 0;
for await (const line of splitLines(Readable.from(generate()))) {
  bytes += line.bytes + 1;
  events += session.stdout(line).length;
}
session.finish({ code: 0, signal: null });
process.stdout.write(JSON.stringify({ harness, bytes, events, peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1), seconds: (Date.now() - start) / 1000 }));
