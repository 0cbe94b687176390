// The sealed-network e2e's probe script (test/cluster/network-probes.ts), run as the agent runs it (node, no
// node_modules, the script alone in a workspace) against loopback servers: the control that makes the e2e's
// "refused" mean refused. Each kind of probe reports a target that answers, one that refuses, one that accepts and
// never answers (timeout, bounded), and a proxy's answers (a 200 tunnel, a 403 refusal).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Server as TcpServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORK_PROBE, NETWORK_PROBE_PATH, PROBE_TIMEOUT_MS, networkProbeCommand, probeReports, reached } from '../cluster/network-probes.ts';
import type { Probe, ProbeReport } from '../cluster/network-probes.ts';
import { freePort } from './nats-server.ts';

let workspace: string;
let web: Server;
let proxy: Server;
let silent: TcpServer;
const held: Socket[] = [];
const port = (s: { address(): AddressInfo | string | null }) => (s.address() as AddressInfo).port;
const proxied: string[] = [];

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'tcab-netprobe-'));
  mkdirSync(dirname(join(workspace, NETWORK_PROBE_PATH)), { recursive: true });
  writeFileSync(join(workspace, NETWORK_PROBE_PATH), NETWORK_PROBE);
  web = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.method} ${req.url} ${req.headers.authorization ?? '-'}`));
  // A forward proxy as Squid answers: absolute-form requests for allowed.test go through, anything else is 403;
  // CONNECT to allowed.test is 200 (the tunnel), else 403.
  proxy = createServer((req, res) => {
    proxied.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('http://allowed.test/')) res.writeHead(200).end('via proxy');
    else res.writeHead(403).end('denied');
  });
  proxy.on('connect', (req, socket: Socket) => {
    proxied.push(`CONNECT ${req.url}`);
    socket.end(req.url?.startsWith('allowed.test:') ? 'HTTP/1.1 200 Connection established\r\n\r\n' : 'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
  });
  // Accepts and never answers: the probe must give up at its deadline.
  silent = createTcpServer((socket) => held.push(socket));
  await Promise.all([web, proxy, silent].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()))));
});

afterAll(async () => {
  for (const s of held) s.destroy();
  await Promise.all([web, proxy, silent].map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(workspace, { recursive: true, force: true });
});

async function run(probes: Probe[]): Promise<Map<string, ProbeReport>> {
  const { stdout } = await promisify(execFile)('sh', ['-c', networkProbeCommand(probes)], { cwd: workspace, env: { PATH: process.env.PATH } });
  expect(stdout).toContain(`probes.done=${probes.length}`);
  return probeReports(stdout);
}

describe('network-probe.mjs', () => {
  it('tcp: connected, refused (a closed port), timeout (bounded by its deadline)', async () => {
    const closed = await freePort();
    const r = await run([
      { name: 'open', kind: 'tcp', host: '127.0.0.1', port: port(web) },
      { name: 'closed', kind: 'tcp', host: '127.0.0.1', port: closed },
    ]);
    expect(r.get('open')).toMatchObject({ outcome: 'connected' });
    expect(reached(r.get('open'))).toBe(true);
    expect(r.get('closed')).toMatchObject({ outcome: 'refused', error: 'ECONNREFUSED' });
    expect(reached(r.get('closed'))).toBe(false);
  });

  it('http: a direct answer with its status and body, a POST with headers, a server that never answers is a timeout', async () => {
    const r = await run([
      { name: 'get', kind: 'http', url: `http://127.0.0.1:${port(web)}/api/x?y=1` },
      { name: 'post', kind: 'http', url: `http://127.0.0.1:${port(web)}/w`, method: 'POST', headers: { Authorization: 'Bearer fake-token' }, body: '{"a":1}' },
      { name: 'silent', kind: 'http', url: `http://127.0.0.1:${port(silent)}/` },
    ]);
    expect(r.get('get')).toMatchObject({ outcome: 'answered', status: 200, body: 'hello GET /api/x?y=1 -' });
    expect(r.get('post')).toMatchObject({ outcome: 'answered', status: 200, body: 'hello POST /w Bearer fake-token' });
    expect(r.get('silent')!.outcome).toBe('timeout');
    expect(r.get('silent')!.ms).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
    expect(r.get('silent')!.ms).toBeLessThan(PROBE_TIMEOUT_MS + 2000);
    expect(reached(r.get('silent'))).toBe(false);
  });

  it('through a proxy: absolute-form requests and CONNECT, the proxy\'s 403 is not a reach', async () => {
    const via = `http://127.0.0.1:${port(proxy)}`;
    const r = await run([
      { name: 'allowed', kind: 'http', url: 'http://allowed.test/x', proxy: via },
      { name: 'denied', kind: 'http', url: 'http://other.test/x', proxy: via },
      { name: 'tunnel', kind: 'connect', proxy: via, host: 'allowed.test', port: 443 },
      { name: 'notunnel', kind: 'connect', proxy: via, host: 'other.test', port: 443 },
    ]);
    expect(proxied).toEqual(expect.arrayContaining(['GET http://allowed.test/x', 'GET http://other.test/x', 'CONNECT allowed.test:443', 'CONNECT other.test:443']));
    expect(r.get('allowed')).toMatchObject({ outcome: 'answered', status: 200, body: 'via proxy' });
    expect(reached(r.get('allowed'))).toBe(true);
    expect(r.get('denied')).toMatchObject({ outcome: 'answered', status: 403 });
    expect(reached(r.get('denied'))).toBe(false);
    expect(r.get('tunnel')).toMatchObject({ outcome: 'answered', status: 200 });
    expect(r.get('notunnel')).toMatchObject({ outcome: 'answered', status: 403 });
  });

  it('`env` takes the proxy from HTTP_PROXY / HTTPS_PROXY, as the run\'s tools do; none set: a direct request, and a CONNECT has nothing to ask', async () => {
    const via = `http://127.0.0.1:${port(proxy)}`;
    const probes: Probe[] = [
      { name: 'envget', kind: 'http', url: 'http://allowed.test/env', proxy: 'env' },
      { name: 'envconnect', kind: 'connect', proxy: 'env', host: 'allowed.test', port: 443 },
    ];
    const withProxy = probeReports((await promisify(execFile)('sh', ['-c', networkProbeCommand(probes)], { cwd: workspace, env: { PATH: process.env.PATH, HTTP_PROXY: via, HTTPS_PROXY: via } })).stdout);
    expect(withProxy.get('envget')).toMatchObject({ outcome: 'answered', status: 200 });
    expect(withProxy.get('envconnect')).toMatchObject({ outcome: 'answered', status: 200 });
    expect(proxied).toContain('GET http://allowed.test/env');
    const direct = await run([{ name: 'direct', kind: 'http', url: `http://127.0.0.1:${port(web)}/d`, proxy: 'env' }, probes[1]!]);
    expect(direct.get('direct')).toMatchObject({ outcome: 'answered', status: 200, body: 'hello GET /d -' });
    expect(direct.get('envconnect')).toMatchObject({ outcome: 'error', error: 'no proxy' });
  });

  it('dns: a name that resolves, one that does not', async () => {
    const r = await run([
      { name: 'local', kind: 'dns', host: 'localhost' },
      { name: 'nowhere', kind: 'dns', host: 'no-such-host.invalid' },
    ]);
    expect(r.get('local')).toMatchObject({ outcome: 'resolved', address: '127.0.0.1' });
    expect(r.get('nowhere')!.outcome).not.toBe('resolved');
  });

  it('probeReports ignores lines that are not reports and keeps values with "." in them', () => {
    const r = probeReports('noise\nx.outcome=answered\nx.status=403\nx.body=a.b=c\nx.ms=12\nprobes.done=1\n');
    expect(r.get('x')).toEqual({ outcome: 'answered', status: 403, body: 'a.b=c', ms: 12 });
  });
});
