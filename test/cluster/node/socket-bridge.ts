// A byte pipe between two sockets, used to cross network namespaces without any address outside them: a Unix
// socket path is reachable from every network namespace (it lives in the filesystem), loopback is not.
//   node socket-bridge.ts --listen unix:/dir/apiserver.sock --to tcp:127.0.0.1:6443   (host network namespace)
//   node socket-bridge.ts --listen tcp:127.0.0.1:6443 --to unix:/dir/apiserver.sock   (the node's, via nsenter)
// TLS passes through unchanged, so the apiserver's certificate (valid for 127.0.0.1) verifies on both sides.
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { listen: { type: 'string' }, to: { type: 'string' } } });
type Endpoint = { path: string } | { host: string; port: number };
function endpoint(spec: string | undefined, flag: string): Endpoint {
  const m = /^(unix):(.+)$|^(tcp):([^:]+):(\d+)$/.exec(spec ?? '');
  if (!m) throw new Error(`--${flag} must be unix:PATH or tcp:HOST:PORT, got ${spec}`);
  return m[1] ? { path: m[2]! } : { host: m[4]!, port: Number(m[5]) };
}
const listen = endpoint(values.listen, 'listen');
const to = endpoint(values.to, 'to');

// Half-open both ways: a client that shuts down its sending side after a request (busybox `nc`, HTTP/1.0
// clients) still gets the response; each direction's end is passed on by pipe(), and both close after both ends.
const server = createServer({ allowHalfOpen: true }, (client: Socket) => {
  const upstream = 'path' in to ? connect({ path: to.path, allowHalfOpen: true }) : connect({ port: to.port, host: to.host, allowHalfOpen: true });
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
if ('path' in listen) {
  rmSync(listen.path, { force: true });
  server.listen(listen.path, () => process.stderr.write(`bridging ${values.listen} -> ${values.to}\n`));
} else server.listen(listen.port, listen.host, () => process.stderr.write(`bridging ${values.listen} -> ${values.to}\n`));
// Long-lived connections (watches) would keep close() waiting: exit at once.
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
