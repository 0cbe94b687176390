// What a hostile agent tries on the network from inside its run (issue 33), as a plain Node script it could write
// itself: TCP connects, HTTP requests (direct, or through the HTTP proxy its environment names, as curl and npm
// would), CONNECT tunnels and DNS lookups. The test gives it a list of probes (JSON, base64 in argv); it prints one
// `<probe>.<field>=<value>` line per fact, which the test reads back from the tool result the scripted model got
// (a gg Run) or from a Pod's log (the control Pod, which no NetworkPolicy selects). Every probe has its own deadline,
// so a probe that hangs is reported as `timeout` and the script always ends.
import { ADVERSARY_DIR } from './adversary-attempts.ts';

export type Probe =
  /** A TCP connection to host:port (an IP: the agent has no DNS). */
  | { name: string; kind: 'tcp'; host: string; port: number }
  /**
   * An HTTP request; `proxy` = through that HTTP proxy (absolute-form request line, as curl sends one), `env` = the
   * one the Pod's HTTP_PROXY names (the run's egress profile); no HTTP_PROXY then = a direct request.
   */
  | { name: string; kind: 'http'; url: string; method?: 'GET' | 'POST'; proxy?: string; headers?: Record<string, string>; body?: string }
  /** CONNECT host:port through the proxy (`env`: HTTPS_PROXY's): the status line the proxy answers. */
  | { name: string; kind: 'connect'; proxy: string; host: string; port: number }
  /** A name lookup through the Pod's resolver (getaddrinfo, as every tool does). */
  | { name: string; kind: 'dns'; host: string };

/** What each probe reports (fields of `<name>.<field>=`): outcome and ms always, status/body/address/error when there are. */
export interface ProbeReport {
  /** connected (tcp), answered (http/connect: see status), resolved (dns), refused, unreachable, timeout, error */
  outcome: string;
  ms: number;
  status?: number;
  body?: string;
  address?: string;
  error?: string;
}

export const PROBE_TIMEOUT_MS = 4000;

/** The probe script: `node network-probe.mjs <base64 JSON Probe[]>`. */
export const NETWORK_PROBE = String.raw`import { connect } from 'node:net';
import { lookup } from 'node:dns/promises';
const probes = JSON.parse(Buffer.from(process.argv[2], 'base64').toString('utf8'));
const TIMEOUT = ${PROBE_TIMEOUT_MS};
const clean = (s) => String(s).replace(/[\r\n]+/g, ' ').slice(0, 120);
const say = (name, field, value) => process.stdout.write(name + '.' + field + '=' + clean(value) + '\n');
const outcomeOf = (code) => code === 'ECONNREFUSED' ? 'refused' : code === 'EHOSTUNREACH' || code === 'ENETUNREACH' ? 'unreachable' : code === 'TIMEOUT' ? 'timeout' : 'error';

// One socket exchange: connect, write, read until the peer closes, the reply is complete, or the deadline.
function exchange(host, port, payload, complete) {
  return new Promise((resolve) => {
    const started = Date.now();
    let data = '';
    let connected = false;
    let done = false;
    const finish = (result) => { if (done) return; done = true; clearTimeout(timer); socket.destroy(); resolve({ ...result, ms: Date.now() - started, data, connected }); };
    const socket = connect({ host, port });
    const timer = setTimeout(() => finish({ code: 'TIMEOUT' }), TIMEOUT);
    socket.on('connect', () => { connected = true; if (payload === undefined) finish({}); else socket.write(payload); });
    socket.on('data', (chunk) => { data += chunk.toString('latin1'); if (complete?.(data)) finish({}); });
    socket.on('end', () => finish({}));
    socket.on('error', (error) => finish({ code: error.code ?? error.message }));
  });
}

function report(name, r) {
  if (r.code && !r.connected) { say(name, 'outcome', outcomeOf(r.code)); say(name, 'error', r.code); }
  else if (r.code === 'TIMEOUT' && !r.data) { say(name, 'outcome', 'timeout'); }
  else {
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(r.data);
    say(name, 'outcome', status ? 'answered' : r.data ? 'answered' : 'closed');
    if (status) say(name, 'status', status[1]);
    const at = r.data.indexOf('\r\n\r\n');
    if (at >= 0) say(name, 'body', r.data.slice(at + 4, at + 4 + 80));
  }
  say(name, 'ms', r.ms);
}

const headComplete = (data) => data.includes('\r\n\r\n') && /^HTTP\/1\.[01] \d{3}/.test(data) && (/\r\ncontent-length: *0\r\n/i.test(data) || data.split('\r\n\r\n')[1].length > 0 || /^HTTP\/1\.[01] 200 Connection established/i.test(data));

for (const p of probes) {
  if (p.kind === 'tcp') {
    const r = await exchange(p.host, p.port);
    if (r.connected) { say(p.name, 'outcome', 'connected'); say(p.name, 'ms', r.ms); } else report(p.name, r);
  } else if (p.kind === 'dns') {
    const started = Date.now();
    const timer = new Promise((resolve) => setTimeout(() => resolve({ code: 'TIMEOUT' }), TIMEOUT));
    const r = await Promise.race([lookup(p.host, { family: 4 }).then((a) => ({ address: a.address }), (e) => ({ code: e.code ?? e.message })), timer]);
    say(p.name, 'outcome', r.address ? 'resolved' : r.code === 'TIMEOUT' ? 'timeout' : 'error');
    if (r.address) say(p.name, 'address', r.address); else say(p.name, 'error', r.code);
    say(p.name, 'ms', Date.now() - started);
  } else if (p.kind === 'connect') {
    const named = p.proxy === 'env' ? process.env.HTTPS_PROXY : p.proxy;
    if (!named) { say(p.name, 'outcome', 'error'); say(p.name, 'error', 'no proxy'); say(p.name, 'ms', 0); continue; }
    const proxy = new URL(named);
    const r = await exchange(proxy.hostname, Number(proxy.port || 80), 'CONNECT ' + p.host + ':' + p.port + ' HTTP/1.1\r\nHost: ' + p.host + ':' + p.port + '\r\n\r\n', (d) => d.includes('\r\n\r\n'));
    report(p.name, r);
  } else {
    const url = new URL(p.url);
    const named = p.proxy === 'env' ? process.env.HTTP_PROXY : p.proxy;
    const via = named ? new URL(named) : url;
    const target = named ? url.href : url.pathname + url.search;
    const body = p.body ?? '';
    const headers = { Host: url.host, Connection: 'close', ...(p.headers ?? {}), ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}) };
    // HTTP/1.0: the answer comes whole (no chunked encoding) and the server closes the connection after it.
    const request = (p.method ?? 'GET') + ' ' + target + ' HTTP/1.0\r\n' + Object.entries(headers).map(([k, v]) => k + ': ' + v).join('\r\n') + '\r\n\r\n' + body;
    const r = await exchange(via.hostname, Number(via.port || 80), request, headComplete);
    report(p.name, r);
  }
}
say('probes', 'done', probes.length);
`;

export const NETWORK_PROBE_PATH = `${ADVERSARY_DIR}/network-probe.mjs`;

/** The shell command that runs the probes (a file of the Run's workspace). */
export function networkProbeCommand(probes: readonly Probe[]): string {
  return `node ${NETWORK_PROBE_PATH} ${Buffer.from(JSON.stringify(probes)).toString('base64')}`;
}

/** `<probe>.<field>=<value>` lines as reports by probe name. */
export function probeReports(output: string): Map<string, ProbeReport> {
  const out = new Map<string, Record<string, string>>();
  for (const line of output.split('\n')) {
    const m = /^([\w-]+)\.(outcome|ms|status|body|address|error)=(.*)$/.exec(line);
    if (!m) continue;
    const fields = out.get(m[1]!) ?? out.set(m[1]!, {}).get(m[1]!)!;
    fields[m[2]!] = m[3]!;
  }
  return new Map([...out].map(([name, f]) => [name, {
    outcome: f.outcome ?? 'missing',
    ms: Number(f.ms ?? NaN),
    ...(f.status ? { status: Number(f.status) } : {}),
    ...(f.body !== undefined ? { body: f.body } : {}),
    ...(f.address ? { address: f.address } : {}),
    ...(f.error ? { error: f.error } : {}),
  }]));
}

/** True when the probe got through to its target (a TCP connection, a lookup that resolved, an HTTP answer that is not the proxy's refusal). */
export function reached(report: ProbeReport | undefined): boolean {
  if (!report) return false;
  if (report.outcome === 'connected' || report.outcome === 'resolved') return true;
  return report.outcome === 'answered' && report.status !== undefined && report.status < 400;
}
