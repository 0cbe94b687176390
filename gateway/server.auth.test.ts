// Only a valid, live token of this gateway gets a request forwarded; everything else is a 401 in the provider's
// own shape that never reaches the provider. The real key never comes back: not in a header, a body or a log line.
import { request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../driver/stub-models/index.ts';
import type { StubModelServer } from '../driver/stub-models/index.ts';
import { startGateway } from './server.ts';
import type { Gateway } from './server.ts';
import { mintToken, TOKEN_PREFIX } from './token.ts';
import { capturedLog, providersAt, REAL_KEYS, SIGNING_KEY, startUpstream } from './test-helpers.ts';

let stub: StubModelServer;
let gateway: Gateway;
let now = Date.parse('2026-12-06T10:00:00Z');
const logged = capturedLog();

beforeAll(async () => {
  stub = await startStubModelServer({ script: { steps: [{ text: 'hi' }] } });
  gateway = await startGateway({ providers: providersAt(stub.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log, clock: () => now, maxTokenLifetimeSeconds: 24 * 3600 });
});
afterAll(async () => {
  await gateway.close();
  await stub.close();
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A request exactly as written (fetch would normalize the path). */
function raw(url: string, path: string, init: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: init.method ?? 'POST', headers: { 'content-type': 'application/json', ...init.headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(init.body ?? '{"model":"m","messages":[{"role":"user","content":"x"}]}');
  });
}

const ANTHROPIC = '/p/anthropic/v1/messages';
const OPENAI = '/p/openai/v1/chat/completions';
const GEMINI = '/p/google/v1beta/models/gemini-2.5-pro:generateContent';

function tamperRun(token: string, run: string): string {
  const [payload, signature] = token.slice(TOKEN_PREFIX.length).split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
  return `${TOKEN_PREFIX}${Buffer.from(JSON.stringify({ ...claims, run })).toString('base64url')}.${signature}`;
}

describe('gateway: who gets through', () => {
  const valid = () => gateway.mint('run-auth', 'uid-1', 600);
  const cases: [string, () => { path: string; headers: OutgoingHttpHeaders }][] = [
    ['no credential at all', () => ({ path: ANTHROPIC, headers: {} })],
    ['a random string', () => ({ path: ANTHROPIC, headers: { 'x-api-key': 'not-a-token' } })],
    ['the real key itself', () => ({ path: ANTHROPIC, headers: { 'x-api-key': REAL_KEYS.anthropic } })],
    ['another provider\'s real key as a bearer', () => ({ path: OPENAI, headers: { authorization: `Bearer ${REAL_KEYS.openai}` } })],
    ['a token signed with another key', () => ({ path: ANTHROPIC, headers: { 'x-api-key': mintToken({ run: 'run-auth', attempt: 'uid-1', exp: Math.floor(now / 1000) + 600 }, Buffer.alloc(32, 1)) } })],
    ['a token whose run was rewritten', () => ({ path: ANTHROPIC, headers: { 'x-api-key': tamperRun(valid(), 'run-other') } })],
    ['a token with its signature cut', () => ({ path: OPENAI, headers: { authorization: `Bearer ${valid().slice(0, -2)}` } })],
    ['a token that claims too long a life', () => ({ path: ANTHROPIC, headers: { 'x-api-key': mintToken({ run: 'run-auth', attempt: 'uid-1', exp: Math.floor(now / 1000) + 30 * 24 * 3600 }, SIGNING_KEY) } })],
    ['a valid token next to a real key in ?key=', () => ({ path: `${GEMINI}?key=${REAL_KEYS.google}`, headers: { 'x-goog-api-key': valid() } })],
    ['a real key in ?key= alone', () => ({ path: `${GEMINI}?key=${REAL_KEYS.google}`, headers: {} })],
    ['a real key in ?%6Bey= (an encoded name)', () => ({ path: `${GEMINI}?%6Bey=${REAL_KEYS.google}`, headers: {} })],
    ['a valid token and a different bearer', () => ({ path: ANTHROPIC, headers: { 'x-api-key': valid(), authorization: 'Bearer sk-something-else' } })],
    ['a valid token in a place the provider does not take', () => ({ path: ANTHROPIC, headers: { 'x-goog-api-key': valid() } })],
    ['a valid token as Basic auth', () => ({ path: OPENAI, headers: { authorization: `Basic ${valid()}` } })],
  ];

  it.each(cases)('%s: 401 in the provider shape, never forwarded', async (_name, make) => {
    const before = stub.requests.length;
    const { path, headers } = make();
    const res = await raw(gateway.url, path, { headers });
    expect(res.status).toBe(401);
    expect(res.headers['x-tcab-gateway']).toBe('unauthorized');
    expect(res.headers['x-should-retry']).toBe('false');
    const body = JSON.parse(res.text) as Record<string, Record<string, unknown>>;
    if (path.startsWith('/p/anthropic')) expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    else if (path.startsWith('/p/google')) expect(body).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    else expect(body).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect(stub.requests.length).toBe(before);
    for (const key of Object.values(REAL_KEYS)) expect(res.text + JSON.stringify(res.headers)).not.toContain(key);
  });

  it('an expired token, then a revoked one, are refused; the same token worked before', async () => {
    const token = gateway.mint('run-life', 'uid-1', 60);
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': token } })).status).toBe(200);
    now += 61_000;
    const before = stub.requests.length;
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': token } })).status).toBe(401);
    const fresh = gateway.mint('run-life', 'uid-1', 60);
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': fresh } })).status).toBe(200);
    gateway.revoke('run-life', 'uid-1');
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': fresh } })).status).toBe(401);
    // A new attempt of the same run (a Run re-created under its name) is not revoked.
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': gateway.mint('run-life', 'uid-2', 60) } })).status).toBe(200);
    expect(stub.requests.length).toBe(before + 2);
  });

  it("one run's token spends as that run only: revoking or exhausting another run changes nothing for it", async () => {
    const a = gateway.mint('run-a', 'uid-1', 600);
    const b = gateway.mint('run-b', 'uid-1', 600, { maxTokens: { total: 1 } });
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': b } })).status).toBe(200);
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': b } })).status).toBe(400); // b's budget
    gateway.revoke('run-b', 'uid-1');
    expect((await raw(gateway.url, ANTHROPIC, { headers: { 'x-api-key': a, 'x-tcab-run': 'run-b' } })).status).toBe(200);
    expect(gateway.usage('run-a', 'uid-1')?.requests).toBe(1);
    expect(gateway.usage('run-b', 'uid-1')?.requests).toBe(1);
    expect(stub.requests.at(-1)!.headers['x-tcab-run']).toBe('run-b'); // other headers pass untouched
  });

  it('a Gemini token in ?key= is swapped for the real key in a header, and the query loses only the key', async () => {
    const token = gateway.mint('run-q', 'uid-1', 600);
    const res = await raw(gateway.url, `/p/google/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${token}&x=1`, { body: '{"contents":[]}' });
    expect(res.status).toBe(200);
    const seen = stub.requests.at(-1)!;
    expect(seen.query).toEqual({ alt: 'sse', x: '1' });
    expect(seen.headers['x-goog-api-key']).toBe(REAL_KEYS.google);
  });
});

describe('gateway: what is not served', () => {
  const token = () => gateway.mint('run-paths', 'uid-1', 600);
  it.each([
    ['/p/openai/v1/files', 404, 'openai'],
    ['/p/openai/v1/fine_tuning/jobs', 404, 'openai'],
    ['/p/anthropic/v1/organizations/api_keys', 404, 'anthropic'],
    ['/p/anthropic/../../v1/messages', 400, 'anthropic'],
    ['/p/anthropic/v1/../v1/messages', 400, 'anthropic'],
    ['/p/anthropic//v1/messages', 400, 'anthropic'],
    ['/p/anthropic/v1%2Fmessages', 400, 'anthropic'],
    ['/p/anthropic/v1/%2e%2e/messages', 400, 'anthropic'],
    ['/p/constructor/v1/messages', 404, null],
    ['/p/__proto__/v1/messages', 404, null],
    ['/p/ANTHROPIC/v1/messages', 404, null],
    ['/v1/messages', 404, null],
    ['http://127.0.0.1/p/anthropic/v1/messages', 404, null],
  ] as const)('%s -> %i, never forwarded', async (path, status, shape) => {
    const before = stub.requests.length;
    const res = await raw(gateway.url, path, { headers: { 'x-api-key': token(), authorization: `Bearer ${token()}` } });
    expect(res.status).toBe(status);
    expect(stub.requests.length).toBe(before);
    const body = JSON.parse(res.text) as Record<string, unknown>;
    if (shape === 'anthropic') expect(body).toMatchObject({ type: 'error' });
    else expect(body).toHaveProperty('error');
  });

  it('a provider without a configured key answers 404 in its shape', async () => {
    const g = await startGateway({ providers: providersAt(stub.url), keys: { anthropic: REAL_KEYS.anthropic }, signingKey: SIGNING_KEY, log: logged.log });
    try {
      const res = await raw(g.url, OPENAI, { headers: { authorization: `Bearer ${g.mint('r', 'a', 60)}` } });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toMatchObject({ error: { type: 'invalid_request_error', code: 'tcab_path_not_served' } });
    } finally {
      await g.close();
    }
  });
});

describe('gateway: the real key never comes back', () => {
  it('an upstream that echoes the key in headers and error bodies (plain and gzip) has it redacted', async () => {
    const echo = await startUpstream((req, res) => {
      const key = String(req.headers['x-api-key']);
      const body = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${key}` } });
      const gzip = req.url?.includes('gz') === true;
      res.writeHead(401, { 'content-type': 'application/json', 'x-echo': `key=${key}`, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
      res.end(gzip ? gzipSync(body) : body);
    });
    const g = await startGateway({ providers: providersAt(echo.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log });
    try {
      for (const q of ['', '?gz=1']) {
        const res = await fetch(`${g.baseUrl('anthropic')}/v1/messages${q}`, { method: 'POST', headers: { 'x-api-key': g.mint('r', 'a', 60) }, body: '{}' });
        const text = await res.text();
        expect(res.status).toBe(401);
        expect(text).toContain('invalid x-api-key [REDACTED]');
        expect(res.headers.get('x-echo')).toBe('key=[REDACTED]');
        expect(text + JSON.stringify([...res.headers])).not.toContain(REAL_KEYS.anthropic);
      }
    } finally {
      await g.close();
      await echo.close();
    }
  });

  it('listens on ::1 too (its URL bracketed)', async () => {
    const g = await startGateway({ host: '::1', providers: providersAt(stub.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log });
    try {
      expect(g.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      const res = await fetch(`${g.baseUrl('anthropic')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': g.mint('r', 'a', 60) }, body: '{"model":"m","messages":[]}' });
      expect(res.status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it('an unreachable upstream is a 502 in the provider shape', async () => {
    const dead = await startUpstream(() => undefined);
    const url = dead.url;
    await dead.close();
    const g = await startGateway({ providers: providersAt(url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log });
    try {
      const res = await fetch(`${g.baseUrl('openai')}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${g.mint('r', 'a', 60)}` }, body: '{}' });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: { type: 'server_error', code: 'tcab_upstream_unreachable' } });
    } finally {
      await g.close();
    }
  });

  it('no log line holds a real key or a token', () => {
    const all = logged.lines.join('');
    expect(all).toContain('no valid run token');
    for (const key of Object.values(REAL_KEYS)) expect(all).not.toContain(key);
    expect(all).not.toContain('tcabgw_');
  });
});
