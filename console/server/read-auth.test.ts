// Read authentication over real HTTP on loopback (issue 33): the login route and its cookie, forged and stale
// sessions, the proxy header trusted only from the trusted CIDRs, and `open` as the only way to read without.
// A protected route `/data` stands for every data route (the console's own are in routes.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_PATHS } from '../../shared/console.ts';
import { SESSION_COOKIE, SessionState } from '../../shared/read-auth.ts';
import { signSession } from '../../shared/read-auth-session.ts';
import { PUBLIC_ROUTE, installReadAuth } from './read-auth.ts';
import type { ReadAuthOptions } from './read-auth.ts';

const READ = 'fake-read-token-0123456789';
const WRITE = 'fake-write-token-9876543210';
const HOUR = 3600;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

interface Served {
  base: string;
  tokens: { read: string; write: string };
  clock: { ms: number };
}

async function serve(options: Partial<ReadAuthOptions> = {}): Promise<Served> {
  const tokens = { read: READ, write: WRITE };
  const clock = { ms: Date.UTC(2026, 11, 6, 7, 0, 0) };
  const app = Fastify();
  installReadAuth(app, { mode: 'token', readToken: () => tokens.read, writeToken: () => tokens.write, sessionMaxAgeSeconds: HOUR, now: () => clock.ms, ...options });
  app.get('/data', async (req) => ({ secret: 'every run', via: req.readAccess?.grant.via }));
  app.get('/probe', PUBLIC_ROUTE, async () => ({ ok: true }));
  apps.push(app);
  return { base: await app.listen({ host: '127.0.0.1', port: 0 }), tokens, clock };
}

const login = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${CONSOLE_PATHS.session}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
const data = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/data`, { headers });
const withCookie = (value: string) => ({ cookie: `${SESSION_COOKIE}=${value}` });

/** The session cookie a response set: its value and attributes (lower-cased names). */
function setCookie(res: Response): { value: string; attributes: Map<string, string> } | undefined {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!line) return undefined;
  const [pair, ...rest] = line.split(';').map((p) => p.trim());
  return { value: pair!.slice(SESSION_COOKIE.length + 1), attributes: new Map(rest.map((a) => [a.split('=')[0]!.toLowerCase(), a.split('=')[1] ?? ''])) };
}

async function sessionOf(base: string, token: string): Promise<string> {
  const res = await login(base, { token });
  expect(res.status).toBe(200);
  return setCookie(res)!.value;
}

describe('token mode', () => {
  it('data needs a credential: the read or the write token as a bearer; the probes stay open', async () => {
    const { base } = await serve();
    expect((await data(base)).status).toBe(401);
    for (const authorization of ['Bearer wrong', 'Bearer ', 'Bearer', `bearer ${READ}`, `Basic ${READ}`, READ, `Bearer  ${READ}`, `Bearer ${READ}x`]) expect((await data(base, { authorization })).status, authorization).toBe(401);
    expect(await (await data(base, { authorization: `Bearer ${READ}` })).json()).toEqual({ secret: 'every run', via: 'bearer' });
    expect((await data(base, { authorization: `Bearer ${WRITE}` })).status).toBe(200);
    expect((await fetch(`${base}/probe`)).status).toBe(200);
    expect((await fetch(`${base}/no-such-route`)).status).toBe(401); // closed by default, even what does not exist
  });

  it('no read token configured: it matches nothing (an empty bearer, an empty login), the write token still reads', async () => {
    const { base, tokens } = await serve();
    tokens.read = '';
    expect((await data(base, { authorization: 'Bearer ' })).status).toBe(401);
    expect((await login(base, { token: '' })).status).toBe(400);
    expect((await data(base, { authorization: `Bearer ${WRITE}` })).status).toBe(200);
  });

  it('login: the read token gets an HttpOnly, SameSite=Strict, Path=/ session cookie (not Secure over http) that reads', async () => {
    const { base, clock } = await serve();
    const res = await login(base, { token: READ });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const expiresAt = new Date(clock.ms + HOUR * 1000).toISOString();
    expect(SessionState.parse(await res.json())).toEqual({ mode: 'token', authenticated: true, via: 'session', credential: 'read-token', expiresAt });
    const cookie = setCookie(res)!;
    expect(cookie.value).not.toContain(READ);
    expect(Object.fromEntries(cookie.attributes)).toEqual({ 'max-age': String(HOUR), path: '/', httponly: '', samesite: 'Strict' });
    expect(await (await data(base, withCookie(cookie.value))).json()).toEqual({ secret: 'every run', via: 'session' });
    const state = await fetch(`${base}${CONSOLE_PATHS.session}`, { headers: withCookie(cookie.value) });
    expect(SessionState.parse(await state.json())).toEqual({ mode: 'token', authenticated: true, via: 'session', credential: 'read-token', expiresAt });
    // The write token logs in too, and says so (the page then keeps it for writes).
    expect(SessionState.parse(await (await login(base, { token: WRITE })).json()).credential).toBe('write-token');
  });

  it('login refuses a wrong, empty or malformed token with no cookie', async () => {
    const { base } = await serve();
    for (const [body, status] of [[{ token: 'wrong' }, 401], [{ token: `${READ}x` }, 401], [{ token: READ.slice(0, -1) }, 401], [{ token: '' }, 400], [{}, 400], [{ token: READ, extra: 1 }, 400], [{ token: 42 }, 400], [{ token: 'x'.repeat(5000) }, 400], ['not json', 400]] as const) {
      const res = await login(base, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(setCookie(res), JSON.stringify(body)).toBeUndefined();
    }
    // Not JSON at all: fastify refuses the content type, and sets nothing.
    const form = await fetch(`${base}${CONSOLE_PATHS.session}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${READ}` });
    expect(form.status).toBe(415);
    expect(setCookie(form)).toBeUndefined();
  });

  it('forged, tampered, stale and foreign sessions are refused', async () => {
    const { base, clock } = await serve();
    const good = await sessionOf(base, READ);
    const [tag, expiry, mac] = good.split('.') as [string, string, string];
    const nowSeconds = Math.floor(clock.ms / 1000);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = {
      'a guess': 'r.9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'the token itself': READ,
      'the MAC tampered (first char)': `${tag}.${expiry}.${flip(mac, 0)}`,
      'the MAC tampered (last char)': `${tag}.${expiry}.${flip(mac, 42)}`,
      'the expiry moved later under the same MAC': `${tag}.${Number(expiry) + 60}.${mac}`,
      'read upgraded to write under the same MAC': `w.${expiry}.${mac}`,
      'the MAC cut short': `${tag}.${expiry}.${mac.slice(0, 40)}`,
      'the MAC padded': `${tag}.${expiry}.${mac}=`,
      'signed with another key': signSession('read-token', 'fake-some-other-token', nowSeconds + 600),
      'signed for longer than the lifetime allows': signSession('read-token', READ, nowSeconds + HOUR + 60),
      'already expired when made': signSession('read-token', READ, nowSeconds - 1),
      'empty': '',
      'huge': 'r.1.'.padEnd(10_000, 'A'),
    };
    for (const [what, value] of Object.entries(forged)) expect((await data(base, withCookie(value))).status, what).toBe(401);
    expect((await data(base, withCookie(good))).status).toBe(200);
    // A valid session with a wrong bearer: the bearer decides (a client that sends a token means that one).
    expect((await data(base, { ...withCookie(good), authorization: 'Bearer wrong' })).status).toBe(401);
  });

  it('a session ends when it expires, and when the token it was made with rotates (only that one)', async () => {
    const { base, clock, tokens } = await serve();
    const readSession = await sessionOf(base, READ);
    const writeSession = await sessionOf(base, WRITE);
    clock.ms += (HOUR - 1) * 1000;
    expect((await data(base, withCookie(readSession))).status).toBe(200);
    clock.ms += 1000;
    expect((await data(base, withCookie(readSession))).status).toBe(401);
    clock.ms -= HOUR * 1000;
    tokens.read = 'fake-rotated-read-token';
    expect((await data(base, withCookie(readSession))).status).toBe(401);
    expect((await data(base, withCookie(writeSession))).status).toBe(200);
    tokens.write = 'fake-rotated-write-token';
    expect((await data(base, withCookie(writeSession))).status).toBe(401);
    // Rotating back (the same value) revives it: the MAC is of the value, there is no session table.
    tokens.read = READ;
    expect((await data(base, withCookie(readSession))).status).toBe(200);
  });

  it('logout clears the cookie with the same attributes and says what is left', async () => {
    const { base } = await serve();
    const session = await sessionOf(base, READ);
    const res = await fetch(`${base}${CONSOLE_PATHS.session}`, { method: 'DELETE', headers: withCookie(session) });
    expect(res.status).toBe(200);
    expect(SessionState.parse(await res.json())).toEqual({ mode: 'token', authenticated: false });
    const cleared = setCookie(res)!;
    expect(cleared.value).toBe('');
    expect(cleared.attributes.get('path')).toBe('/');
    expect(cleared.attributes.has('httponly')).toBe(true);
    expect(new Date(cleared.attributes.get('expires')!).getTime()).toBeLessThan(Date.now());
  });

  it('Secure only when the request came over https: X-Forwarded-Proto is believed from a trusted proxy only', async () => {
    const trusting = await serve({ trustedCidrs: ['127.0.0.0/8', '::1/128'] });
    const https = await login(trusting.base, { token: READ }, { 'x-forwarded-proto': 'https' });
    expect(setCookie(https)!.attributes.has('secure')).toBe(true);
    expect(setCookie(await login(trusting.base, { token: READ }, { 'x-forwarded-proto': 'https, http' }))!.attributes.has('secure')).toBe(true);
    expect(setCookie(await login(trusting.base, { token: READ }, { 'x-forwarded-proto': 'http' }))!.attributes.has('secure')).toBe(false);
    const elsewhere = await serve({ trustedCidrs: ['10.0.0.0/8'] });
    expect(setCookie(await login(elsewhere.base, { token: READ }, { 'x-forwarded-proto': 'https' }))!.attributes.has('secure')).toBe(false);
  });
});

describe('proxy mode', () => {
  const ALICE = { 'x-auth-request-user': 'alice@example.com' };

  it('a user named by a proxy inside the trusted CIDRs reads; the same header from elsewhere is ignored and needs the token', async () => {
    const trusted = await serve({ mode: 'proxy', trustedCidrs: ['127.0.0.0/8', '::1/128'] });
    expect(await (await data(trusted.base, ALICE)).json()).toEqual({ secret: 'every run', via: 'proxy' });
    const state = SessionState.parse(await (await fetch(`${trusted.base}${CONSOLE_PATHS.session}`, { headers: ALICE })).json());
    expect(state).toEqual({ mode: 'proxy', authenticated: true, via: 'proxy', user: 'alice@example.com' });
    // A proxy that sent no user (or an unusable one): the token, as in token mode.
    for (const user of ['', '   ', 'bob\tsmith', 'x'.repeat(300)]) expect((await data(trusted.base, { 'x-auth-request-user': user })).status, JSON.stringify(user)).toBe(401);
    expect((await data(trusted.base, { authorization: `Bearer ${READ}` })).status).toBe(200);

    const spoofed = await serve({ mode: 'proxy', trustedCidrs: ['10.0.0.0/8', 'fd00::/8'] });
    expect((await data(spoofed.base, ALICE)).status).toBe(401);
    expect((await data(spoofed.base, { ...ALICE, 'x-forwarded-for': '10.1.2.3' })).status).toBe(401); // the TCP peer counts, not a header
    expect((await data(spoofed.base, { ...ALICE, authorization: `Bearer ${READ}` })).status).toBe(200);
    expect((await data(spoofed.base, withCookie(await sessionOf(spoofed.base, READ)))).status).toBe(200);
  });

  it('only the configured header names the user', async () => {
    const { base } = await serve({ mode: 'proxy', trustedCidrs: ['127.0.0.0/8', '::1/128'], proxyUserHeader: 'X-Forwarded-User' });
    expect((await data(base, ALICE)).status).toBe(401);
    expect((await data(base, { 'x-forwarded-user': 'alice' })).status).toBe(200);
  });

  it('in token mode the header counts for nothing, even from a trusted peer', async () => {
    const { base } = await serve({ mode: 'token', trustedCidrs: ['127.0.0.0/8', '::1/128'] });
    expect((await data(base, ALICE)).status).toBe(401);
  });
});

describe('open mode', () => {
  it('reads without a credential; logging in sets no cookie', async () => {
    const { base } = await serve({ mode: 'open' });
    expect(await (await data(base)).json()).toEqual({ secret: 'every run', via: 'open' });
    const res = await login(base, { token: 'anything' });
    expect(SessionState.parse(await res.json())).toEqual({ mode: 'open', authenticated: true, via: 'open' });
    expect(setCookie(res)).toBeUndefined();
  });
});

describe('installReadAuth', () => {
  it('refuses a second install on one app (two hooks would disagree)', () => {
    const app = Fastify();
    installReadAuth(app, { mode: 'token', readToken: () => READ, writeToken: () => WRITE });
    expect(() => installReadAuth(app, { mode: 'open', readToken: () => READ, writeToken: () => WRITE })).toThrow(/already installed/);
  });
});
