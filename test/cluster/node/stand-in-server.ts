// A stand-in for a host a hostile agent would try to reach from a run (issue 33): "the internet" outside every
// allowlist, or a cloud's instance metadata endpoint. It answers every HTTP request with its name, so a probe that
// got through is told from one that was refused, and prints one JSON line per request (its log is the record of
// which probes arrived at all).
//   node stand-in-server.ts --listen <ip>:<port> --name <name>
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { listen: { type: 'string' }, name: { type: 'string' } } });
const listen = values.listen ?? '';
const name = values.name ?? 'stand-in';
const colon = listen.lastIndexOf(':');
if (colon < 1) throw new Error(`--listen <ip>:<port>, got "${listen}"`);

const server = createServer((req, res) => {
  process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), from: req.socket.remoteAddress, method: req.method, url: req.url, host: req.headers.host })}\n`);
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`tcab stand-in ${name}\n`);
});
server.listen(Number(listen.slice(colon + 1)), listen.slice(0, colon), () => process.stdout.write(`listening ${listen} as ${name}\n`));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.close(() => process.exit(0)));
