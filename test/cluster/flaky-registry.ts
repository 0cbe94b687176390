// A registry that answers 503 (issue 35, supply faults): an HTTP proxy in front of the node's own registry, run
// inside the node's network namespace (nsenter --net=<netnsPath> -- node flaky-registry.ts ...) and named to
// containerd by a hosts.toml of its own (supply-faults.test.ts). While "down" (its state at start) it answers every
// request `503 Service Unavailable`, as a registry behind a load balancer with no healthy backend does; while "up"
// it forwards every request to the registry and streams the answer back unchanged. Controlled by lines on stdin
// (`up`, `down`: each acknowledged by a `{"state":...}` line); it exits when stdin ends (its parent is gone).
// Prints `listening <ip>:<port>` once, then one JSON line per request: {at, method, url, status}.
//   node flaky-registry.ts --listen 127.0.0.1:0 --to 127.0.0.1:5000
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { listen: { type: 'string' }, to: { type: 'string' } } });
const split = (address: string | undefined, flag: string) => {
  const colon = address?.lastIndexOf(':') ?? -1;
  if (!address || colon < 1) throw new Error(`${flag} <ip>:<port>, got "${address ?? ''}"`);
  return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
};
const listen = split(values.listen, '--listen');
const upstream = split(values.to, '--to');
let up = false;

const log = (record: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(record)}\n`);

const server = createServer((req, res) => {
  const entry = { at: new Date().toISOString(), method: req.method, url: req.url };
  if (!up) {
    log({ ...entry, status: 503 });
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('registry unavailable\n');
    return;
  }
  const forward = request({ ...upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    log({ ...entry, status: answer.statusCode });
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  forward.on('error', (error) => {
    log({ ...entry, status: 502, error: error.message });
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end();
  });
  req.pipe(forward);
});
server.listen(listen.port, listen.host, () => process.stdout.write(`listening ${listen.host}:${(server.address() as AddressInfo).port}\n`));

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const word = line.trim();
    if (word !== 'up' && word !== 'down') return;
    up = word === 'up';
    log({ at: new Date().toISOString(), state: word });
  })
  .on('close', () => process.exit(0));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
