// The chart's egress values (issue 33), rendered with the pinned helm: TCAB_EGRESS is what shared/egress.ts
// EgressConfig accepts, with or without the npm cache and with the proxy off; the values that could only fail at
// run time are refused with a message. Then the squid.conf it renders runs Debian's real Squid (apt `squid`,
// .ci/run installs it) as uid 1000, as in its Pod, against stand-in upstreams on loopback (plain HTTP on port 80,
// TLS on 443, reached by CONNECT): each profile reaches its own hosts and the model hosts, nothing else; a name that
// resolves into deniedDestinations is refused even by `open`; CONNECT goes to 443 only. Needs root (ports 80 and
// 443, and Squid started as uid 1000). The test only talks to 127.0.0.1 and ::1.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request } from 'node:http';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { V1ConfigMap, V1Deployment, V1Service } from '@kubernetes/client-node';
import { EgressConfig } from '../../shared/egress.ts';
import { CHART, one, refused, render } from './chart-render.ts';
import type { Manifest } from './chart-render.ts';
import { freePort } from '../support/nats-server.ts';

const SQUID = '/usr/sbin/squid';
const RUN_UID = 1000;
/** TCAB_EGRESS of the dispatcher, parsed by the contract the dispatcher reads it with. */
function egressConfig(all: Manifest[]): EgressConfig {
  const env = one<V1Deployment>(all, 'Deployment', 't-tcab-dispatcher')!.spec!.template.spec!.containers[0]!.env!;
  return EgressConfig.parse(JSON.parse(env.find((e) => e.name === 'TCAB_EGRESS')!.value!));
}
const chartDefaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as { egress: { modelHosts: string[]; deniedDestinations: string[]; profiles: Record<string, { port: number; hosts: string[] }> } };

describe('charts/tcab egress', () => {
  it('defaults: a proxy port per profile, registries by default without the npm cache, in-cluster names not proxied', async () => {
    const all = await render();
    const config = egressConfig(all);
    const { modelHosts, profiles } = chartDefaults.egress;
    expect(config.defaultProfile).toBe('registries');
    expect(config.profiles).toEqual({
      none: { proxy: 'http://t-tcab-egress.ns.svc:3130', hosts: modelHosts },
      registries: { proxy: 'http://t-tcab-egress.ns.svc:3128', hosts: [...profiles.registries!.hosts, ...modelHosts] },
      open: { proxy: 'http://t-tcab-egress.ns.svc:3129', hosts: ['*'] },
    });
    expect(config.noProxy).toEqual(['.svc', '.svc.cluster.local', '.cluster.local', 'localhost', '127.0.0.1', 't-tcab-nats.ns.svc']);
    // What the NetworkPolicies and the drivers rely on: the Service's port names, the Pods' labels.
    const service = one<V1Service>(all, 'Service', 't-tcab-egress')!;
    expect(service.spec!.ports).toEqual([
      { name: 'none', port: 3130, targetPort: 'none' },
      { name: 'open', port: 3129, targetPort: 'open' },
      { name: 'registries', port: 3128, targetPort: 'registries' },
    ]);
    const proxy = one<V1Deployment>(all, 'Deployment', 't-tcab-egress-proxy')!.spec!.template;
    expect(service.spec!.selector).toEqual({ 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'egress-proxy' });
    expect(proxy.metadata!.labels).toEqual(service.spec!.selector);
    const pod = proxy.spec!;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(pod.containers[0]!.args).toEqual(['-f', '/etc/tcab/egress-proxy/squid.conf']);
    // The cloud metadata service and the cluster's private ranges are refused by resolved address.
    const conf = one<V1ConfigMap>(all, 'ConfigMap', 't-tcab-egress-proxy')!.data!['squid.conf']!;
    const denied = conf.match(/^acl denied_destinations dst (.*)$/m)![1]!.split(' ');
    expect(denied).toEqual(expect.arrayContaining(['169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '198.18.0.0/15', '127.0.0.0/8', '::1/128', 'fc00::/7']));
  });

  it('with the npm cache the default is none and the cache is not proxied; a changed policy rolls the proxy Pods', async () => {
    const on = await render('--set', 'npmCache.enabled=true');
    expect(egressConfig(on).defaultProfile).toBe('none');
    expect(egressConfig(on).noProxy).toContain('t-tcab-npm-cache.ns.svc');
    const checksum = (all: Manifest[]) => one<V1Deployment>(all, 'Deployment', 't-tcab-egress-proxy')!.spec!.template.metadata!.annotations!['checksum/config'];
    const changed = await render('--set-json', 'egress.modelHosts=["api.anthropic.com"]');
    expect(checksum(changed)).not.toBe(checksum(on));
    expect(checksum(await render('--set', 'npmCache.enabled=true', '--set', 'egress.defaultProfile=open'))).toBe(checksum(on));
  });

  it('egress.enabled=false: no proxy at all, and profiles without a proxy URL', async () => {
    const all = await render('--set', 'egress.enabled=false');
    expect(all.filter((m) => m.metadata.name.includes('egress'))).toEqual([]);
    const config = egressConfig(all);
    expect(config.defaultProfile).toBe('registries');
    expect(Object.values(config.profiles).map((p) => p.proxy)).toEqual([undefined, undefined, undefined]);
  });

  it('refuses a bad profile name, a port clash and a default profile that does not exist, saying what to change', async () => {
    expect(await refused('--set-json', 'egress.profiles={"Bad_Name":{"port":3131,"hosts":[]}}')).toContain("invalid propertyName 'Bad_Name'");
    // The template's own check, for an install that skips the schema.
    expect(await refused('--skip-schema-validation', '--set-json', 'egress.profiles={"much-too-long-name":{"port":3131,"hosts":[]}}')).toContain('egress.profiles: "much-too-long-name" is not a profile name');
    expect(await refused('--set', 'egress.profiles.open.port=3128')).toMatch(/egress\.profiles: (open and registries|registries and open) both use port 3128/);
    expect(await refused('--set', 'egress.defaultProfile=sealed')).toContain('egress.defaultProfile "sealed" (as set) is not one of egress.profiles (none, open, registries)');
    expect(await refused('--set', 'npmCache.enabled=true', '--set', 'egress.profiles.none=null')).toContain('egress.defaultProfile "none" (the default for this npmCache.enabled) is not one of egress.profiles (open, registries)');
    expect(await refused('--set', 'egress.profiles.open.port=80')).toContain('/egress/profiles/open/port');
    expect(await refused('--set-json', 'egress.deniedDestinations=["metadata.internal"]')).toContain('/egress/deniedDestinations/0');
    expect(await refused('--set-json', 'egress.deniedDestinations=[]')).toContain('/egress/deniedDestinations');
    // Ports clash only where a proxy listens.
    expect(egressConfig(await render('--set', 'egress.enabled=false', '--set', 'egress.profiles.open.port=3128')).defaultProfile).toBe('registries');
  });
});

// ---- The real Squid ----

interface Reply { status: number; body?: { tls: boolean; host: string; local: string } }

/** A plain HTTP request through the proxy (absolute URL), as HTTP_PROXY clients send it. */
function proxiedGet(port: number, url: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      void readBody(res).then((text) => resolve({ status: res.statusCode!, body: res.statusCode === 200 ? JSON.parse(text) : undefined }), reject);
    });
    req.on('error', reject).end();
  });
}

/** CONNECT host:port through the proxy; when it is let through, an HTTPS GET inside the tunnel (verified against the stand-in's CA). */
function proxiedConnect(port: number, authority: string, ca: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'CONNECT', path: authority, agent: false });
    req.on('connect', (res: IncomingMessage, socket: Socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ status: res.statusCode! });
        return;
      }
      const servername = authority.replace(/:\d+$/, '');
      // No agent: the request rides the tunnel's socket (an agent would dial on its own).
      const inner = httpsRequest({ host: servername, path: '/', headers: { host: servername }, createConnection: () => tlsConnect({ socket, servername, ca }) }, (innerRes) => {
        void readBody(innerRes).then((text) => resolve({ status: 200, body: JSON.parse(text) }), reject);
      });
      inner.on('error', reject).end();
    });
    req.on('error', reject).end();
  });
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.on('data', (d: Buffer) => (text += d.toString()));
    res.on('end', () => resolve(text)).on('error', reject);
  });
}

function listening(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Resolves once something listens on 127.0.0.1:port; rejects (for vi.waitFor to try again) while nothing does. */
const accepts = (port: number) => new Promise<true>((resolve, reject) => {
  const socket = netConnect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
  socket.on('error', reject);
});

interface LogLine { profile: string; method: string; url: string; status: number; result: string; server: string; ms: number }

describe('the egress proxy (real Squid, the chart\'s squid.conf)', () => {
  let dir: string;
  let squid: ChildProcess | undefined;
  let squidLog = '';
  let ca: string;
  const servers: Server[] = [];
  const ports = { none: 0, registries: 0, open: 0 };
  const logLines = (): LogLine[] => (existsSync(join(dir, 'access.log')) ? readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogLine) : []);

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('the egress proxy test needs root: stand-in upstreams on ports 80 and 443, Squid started as uid 1000');
    if (!existsSync(SQUID)) throw new Error(`${SQUID} is missing: apt-get install -y --no-install-recommends squid (.ci/run installs it)`);
    dir = mkdtempSync(join(tmpdir(), 'tcab-egress-'));
    chownSync(dir, RUN_UID, RUN_UID);

    // Stand-in upstreams: each answers with what it saw, on 127.0.0.1 and ::1, plain HTTP on 80 and TLS on 443.
    const names = ['pkg.registry.test', 'files.test', 'a.files.test', 'model.test', 'outside.test', 'internal.test', 'both.test'];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=tcab egress test', '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`, '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt')], { stdio: 'ignore' });
    ca = readFileSync(join(dir, 'tls.crt'), 'utf8');
    const answer = (tls: boolean): RequestListener => (req, res) => res.end(JSON.stringify({ tls, host: req.headers.host, local: req.socket.localAddress }));
    for (const host of ['127.0.0.1', '::1']) {
      servers.push(await listening(createHttpServer(answer(false)), 80, host));
      servers.push(await listening(createHttpsServer({ key: readFileSync(join(dir, 'tls.key')), cert: ca }, answer(true)), 443, host));
    }

    // The chart's policy with test hosts: registries allows a host and a domain (its bare name listed too, which
    // the chart must fold into the domain for Squid to start), model.test is the model host, and loopback is no
    // longer denied so the stand-ins on 127.0.0.1 are reachable (::1 stays denied, as in the chart).
    Object.assign(ports, { none: await freePort(), registries: await freePort(), open: await freePort() });
    const denied = chartDefaults.egress.deniedDestinations;
    expect(denied).toEqual(expect.arrayContaining(['127.0.0.0/8', '::1/128', '169.254.0.0/16']));
    const values = {
      egress: {
        profiles: {
          none: { port: ports.none, hosts: [] },
          registries: { port: ports.registries, hosts: ['pkg.registry.test', 'files.test', '.files.test'] },
          open: { port: ports.open, hosts: ['*'] },
        },
        modelHosts: ['model.test'],
        deniedDestinations: denied.filter((d) => d !== '127.0.0.0/8'),
      },
    };
    writeFileSync(join(dir, 'values.json'), JSON.stringify(values));
    const conf = one<V1ConfigMap>(await render('-f', join(dir, 'values.json')), 'ConfigMap', 't-tcab-egress-proxy')!.data!['squid.conf']!;
    // The Pod's listening addresses and paths moved to loopback and this test's directory, names from a hosts file
    // and no DNS server beyond loopback; the policy itself unchanged.
    let local = conf.replace(/^http_port (\d+) name=/gm, 'http_port 127.0.0.1:$1 name=').replaceAll('/run/squid', dir);
    expect(local.match(/^http_port 127\.0\.0\.1:/gm)).toHaveLength(3);
    expect(local).toContain(`access_log stdio:${dir}/access.log tcab has_request`);
    local += `hosts_file ${dir}/hosts\ndns_nameservers 127.0.0.1\n`;
    writeFileSync(join(dir, 'squid.conf'), local);
    writeFileSync(join(dir, 'hosts'), [
      '127.0.0.1 pkg.registry.test files.test a.files.test model.test outside.test both.test',
      '::1 internal.test both.test',
    ].join('\n') + '\n');
    squid = spawn(SQUID, ['-N', '-d', '1', '-f', join(dir, 'squid.conf')], { uid: RUN_UID, gid: RUN_UID, stdio: ['ignore', 'ignore', 'pipe'] });
    squid.stderr!.on('data', (d: Buffer) => (squidLog += d.toString()));
    const exited = new Promise<never>((_, reject) => squid!.once('exit', (code) => reject(new Error(`squid exited ${code}: ${squidLog.slice(-3000)}`))));
    await Promise.race([exited, Promise.all(Object.values(ports).map((port) => vi.waitFor(() => accepts(port), { timeout: 30_000, interval: 50 })))]);
  });

  afterAll(async () => {
    if (squid && squid.exitCode === null) {
      const gone = new Promise((resolve) => squid!.once('exit', resolve));
      squid.kill('SIGKILL'); // nothing to flush; SIGTERM would wait out shutdown_lifetime
      await gone;
    }
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('registries reaches its own hosts (a host, a domain and its subdomains), by plain HTTP and by CONNECT', async () => {
    for (const host of ['pkg.registry.test', 'files.test', 'a.files.test']) {
      expect(await proxiedGet(ports.registries, `http://${host}/`)).toEqual({ status: 200, body: { tls: false, host, local: '127.0.0.1' } });
      expect(await proxiedConnect(ports.registries, `${host}:443`, ca)).toEqual({ status: 200, body: { tls: true, host, local: '127.0.0.1' } });
    }
  });

  it('a host outside the profile is refused at once (no lookup, no connection), and the same request through open gets through', async () => {
    for (const [port, host] of [[ports.registries, 'outside.test'], [ports.none, 'pkg.registry.test']] as const) {
      expect(await proxiedGet(port, `http://${host}/`)).toEqual({ status: 403 });
      expect(await proxiedConnect(port, `${host}:443`, ca)).toEqual({ status: 403 });
      expect(await proxiedGet(ports.open, `http://${host}/`)).toMatchObject({ status: 200, body: { host } });
      expect(await proxiedConnect(ports.open, `${host}:443`, ca)).toMatchObject({ status: 200, body: { host, tls: true } });
    }
    const refusals = await vi.waitFor(() => {
      const found = logLines().filter((l) => l.result === 'TCP_DENIED' && /outside\.test|pkg\.registry\.test/.test(l.url));
      expect(found, 'the refusals in the access log').toHaveLength(4);
      return found;
    }, { timeout: 10_000, interval: 50 });
    expect(refusals.map((l) => [l.profile, l.method, l.url, l.status])).toEqual([
      ['registries', 'GET', 'http://outside.test/', 403],
      ['registries', 'CONNECT', 'outside.test:443', 403],
      ['none', 'GET', 'http://pkg.registry.test/', 403],
      ['none', 'CONNECT', 'pkg.registry.test:443', 403],
    ]);
    // No server contacted, answered at once (a lookup or a connection attempt would take up to 10 s each).
    for (const line of refusals) expect(line).toMatchObject({ server: '-', ms: expect.any(Number) });
    expect(Math.max(...refusals.map((l) => l.ms))).toBeLessThan(1000);
    // The bare TCP connections that waited for Squid (as the kubelet's probes do) left no line.
    expect(logLines().filter((l) => l.url.startsWith('error:'))).toEqual([]);
  });

  it('the model hosts are reachable from every profile, none included', async () => {
    for (const port of Object.values(ports)) {
      expect(await proxiedGet(port, 'http://model.test/')).toMatchObject({ status: 200, body: { host: 'model.test' } });
      expect(await proxiedConnect(port, 'model.test:443', ca)).toMatchObject({ status: 200, body: { host: 'model.test', tls: true } });
    }
  });

  it('a name that resolves into deniedDestinations (even partly) or such an address itself is refused, even through open', async () => {
    // A server does answer there: the refusal is the proxy's.
    const direct = await new Promise<number>((resolve, reject) => request({ host: '::1', port: 80, path: '/', agent: false }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject).end());
    expect(direct).toBe(200);
    for (const port of Object.values(ports)) {
      for (const url of ['http://internal.test/', 'http://both.test/', 'http://[::1]/']) expect(await proxiedGet(port, url), `${url} on ${port}`).toEqual({ status: 403 });
      for (const authority of ['internal.test:443', 'both.test:443', '[::1]:443']) expect(await proxiedConnect(port, authority, ca), `${authority} on ${port}`).toEqual({ status: 403 });
    }
    // Refused by Squid before any connection (not an upstream's 403).
    const open = await vi.waitFor(() => {
      const found = logLines().filter((l) => l.profile === 'open' && /internal\.test|both\.test|\[::1\]/.test(l.url));
      expect(found, 'open\'s refusals in the access log').toHaveLength(6);
      return found;
    }, { timeout: 10_000, interval: 50 });
    for (const line of open) expect(line, line.url).toMatchObject({ status: 403, result: 'TCP_DENIED', server: '-' });
  });

  it('CONNECT only to port 443, plain HTTP only to 80 and 443, whatever the profile', async () => {
    for (const port of [ports.registries, ports.open]) {
      expect(await proxiedConnect(port, 'pkg.registry.test:80', ca)).toEqual({ status: 403 });
      expect(await proxiedGet(port, 'http://pkg.registry.test:8080/')).toEqual({ status: 403 });
      // The same host on its allowed ports gets through.
      expect(await proxiedConnect(port, 'pkg.registry.test:443', ca)).toMatchObject({ status: 200 });
      expect(await proxiedGet(port, 'http://pkg.registry.test:80/')).toMatchObject({ status: 200 });
    }
    const refused = logLines().filter((l) => /pkg\.registry\.test:(80|8080)\b/.test(l.url));
    expect(refused.map((l) => [l.profile, l.result, l.server])).toEqual([
      ['registries', 'TCP_DENIED', '-'], ['registries', 'TCP_DENIED', '-'], ['open', 'TCP_DENIED', '-'], ['open', 'TCP_DENIED', '-'],
    ]);
  });
});
