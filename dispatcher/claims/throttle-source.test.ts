import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/log.ts';
import { GATEWAY_CONTROL } from '../../shared/gateway.ts';
import type { ThrottleReport } from '../../shared/gateway.ts';
import { STALE_MS, ThrottleBook } from './throttle.ts';
import { throttleGatewayOf, ThrottlePoller } from './throttle-source.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** The gateway stand-in: answers each request with what `answer` says (status and body), and records it. */
let answer: (req: IncomingMessage) => { status: number; body: string };
const seen: { url: string | undefined; authorization: string | undefined }[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization });
    const { status, body } = answer(req);
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const reportAt = (now: number, retryAfter: number | null = 30, model = 'claude-x'): ThrottleReport => ({
  now: iso(now),
  window_s: 600,
  throttles: [{ provider: 'anthropic', model, status: 429, count: 3, ok_since: 0, last_at: iso(now - 1000), retry_after_s: retryAfter }],
});

/** A clock the test moves; timers are recorded, never fired by themselves. */
function fakeClock(start: number) {
  const timers: { fn: () => void; ms: number }[] = [];
  return { t: start, timers, now() { return this.t; }, setTimeout(fn: () => void, ms: number) { timers.push({ fn, ms }); return timers.length; }, clearTimeout() {} };
}

function logSink() {
  const lines: { level: string; msg: string }[] = [];
  const log = createLogger({ component: 'test', level: 'info', destination: { write: (line: string) => lines.push(JSON.parse(line) as { level: string; msg: string }) } });
  return { log, lines };
}

let clock: ReturnType<typeof fakeClock>;
let book: ThrottleBook;
let changes: number;
let started: number;
let logs: ReturnType<typeof logSink>;
let poller: ThrottlePoller;

beforeEach(() => {
  seen.length = 0;
  clock = fakeClock(T0);
  book = new ThrottleBook();
  changes = 0;
  started = 0;
  logs = logSink();
  poller = new ThrottlePoller({
    gateway: { url, adminToken: async () => 'admin-secret' },
    book,
    clock,
    log: logs.log,
    onChange: () => (changes += 1),
    onHoldsStarted: (holds) => (started += holds.length),
  });
});

describe('ThrottlePoller against a local gateway', () => {
  it('GETs the throttles route with the admin token and feeds the book', async () => {
    answer = () => ({ status: 200, body: JSON.stringify(reportAt(T0)) });
    expect(await poller.pollOnce()).toBe(true);
    expect(seen).toEqual([{ url: GATEWAY_CONTROL.throttles, authorization: 'Bearer admin-secret' }]);
    expect(book.holdOf('anthropic', ['claude-x'], clock.now())).toMatchObject({ retryAfterS: 30, level: 1 });
    expect([changes, started]).toEqual([1, 1]);
    let told = 0;
    const unsubscribe = poller.subscribe(() => (told += 1));
    // The same report again: nothing changes, nothing is started.
    expect(await poller.pollOnce()).toBe(true);
    expect([changes, started, told]).toEqual([1, 1, 0]);
    // A longer hold on another model: a change, told to subscribers too.
    answer = () => ({ status: 200, body: JSON.stringify({ ...reportAt(T0), throttles: [...reportAt(T0).throttles, ...reportAt(T0, 60, 'claude-y').throttles] }) });
    expect(await poller.pollOnce()).toBe(true);
    expect([changes, started, told]).toEqual([2, 2, 1]);
    unsubscribe();
  });

  it.each([
    ['a 500', { status: 500, body: '{"error":"boom"}' }],
    ['a 401 (a wrong admin token)', { status: 401, body: '' }],
    ['malformed JSON', { status: 200, body: '{"now": "2026-' }],
    ['JSON that is not a ThrottleReport', { status: 200, body: JSON.stringify({ now: 'yesterday', throttles: [] }) }],
    ['a row with a bad provider name', { status: 200, body: JSON.stringify({ ...reportAt(T0), throttles: [{ ...reportAt(T0).throttles[0], provider: 'Bad Name' }] }) }],
  ])('%s: no report taken, the failure logged once, the earlier holds kept until they are stale', async (_name, bad) => {
    answer = () => ({ status: 200, body: JSON.stringify(reportAt(T0)) });
    await poller.pollOnce();
    answer = () => bad;
    expect(await poller.pollOnce()).toBe(false);
    expect(await poller.pollOnce()).toBe(false);
    expect(logs.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(book.holdOf('anthropic', ['claude-x'], clock.now())).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
    // No good report for longer than the stale bound: nothing is held, and the claim pass is told.
    clock.t = T0 + STALE_MS + 1;
    const before = changes;
    expect(await poller.pollOnce()).toBe(false);
    expect(book.holds(clock.now())).toEqual([]);
    expect(changes).toBe(before + 1);
    // The gateway answers again: logged once.
    answer = () => ({ status: 200, body: JSON.stringify(reportAt(clock.t)) });
    expect(await poller.pollOnce()).toBe(true);
    expect(logs.lines.filter((l) => l.level === 'info' && /works again/.test(l.msg))).toHaveLength(1);
  });

  it('a gateway that is down: tolerated, logged once, nothing held', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = new ThrottlePoller({ gateway: { url: deadUrl, adminToken: async () => 't' }, book, clock, log: logs.log });
    expect(await down.pollOnce()).toBe(false);
    expect(await down.pollOnce()).toBe(false);
    expect(logs.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(book.holds(clock.now())).toEqual([]);
  });

  it('start polls at once and schedules the next poll on the injected clock; stop ends it', async () => {
    answer = () => ({ status: 200, body: JSON.stringify(reportAt(T0)) });
    const first = poller.start();
    await poller.stop();
    await first;
    expect(seen).toHaveLength(1);
    expect(clock.timers).toEqual([]);
  });

  it('the next poll is scheduled after each one, at the interval', async () => {
    answer = () => ({ status: 200, body: JSON.stringify(reportAt(T0)) });
    const p = new ThrottlePoller({ gateway: { url, adminToken: async () => 'a' }, book, clock, log: logs.log, intervalMs: 1234 });
    await p.start();
    expect(clock.timers.map((t) => t.ms)).toEqual([1234]);
    // The timer fires: another poll, another timer.
    clock.timers[0]!.fn();
    await p.stop();
    expect(seen).toHaveLength(2);
  });
});

describe('throttleGatewayOf', () => {
  it('reads the URL and the admin token file from the settings, the token at each call', async () => {
    let token = 'one\n';
    const gw = throttleGatewayOf({ TCAB_GATEWAY_URL: 'http://gw:8080/', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/x/token' }, async (path) => (path === '/x/token' ? token : ''))!;
    expect(gw.url).toBe('http://gw:8080');
    expect(await gw.adminToken()).toBe('one');
    token = 'two';
    expect(await gw.adminToken()).toBe('two');
  });

  it.each([
    ['no gateway settings (before they exist)', {}],
    ['a URL without a token file', { TCAB_GATEWAY_URL: 'http://gw' }],
    ['empty values', { TCAB_GATEWAY_URL: '', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '' }],
  ])('%s: undefined, nothing polled', (_name, settings) => {
    expect(throttleGatewayOf(settings)).toBeUndefined();
  });
});

describe('ThrottlePoller: gateway restarts', () => {
  it('tells a new boot_id (a restart that forgot its revocations), not the first one read nor a repeat', async () => {
    let restarts = 0;
    const watcher = new ThrottlePoller({ gateway: { url, adminToken: async () => 'admin-secret' }, book: new ThrottleBook(), clock: fakeClock(T0), log: logSink().log, onGatewayRestart: () => (restarts += 1) });
    const boot = (id: string | undefined) => (answer = () => ({ status: 200, body: JSON.stringify({ ...reportAt(T0), ...(id ? { boot_id: id } : {}) }) }));
    boot('boot-a');
    expect(await watcher.pollOnce()).toBe(true);
    expect(await watcher.pollOnce()).toBe(true);
    expect(restarts).toBe(0);
    boot('boot-b');
    expect(await watcher.pollOnce()).toBe(true);
    expect(restarts).toBe(1);
    boot(undefined); // a gateway that does not say: nothing to compare
    expect(await watcher.pollOnce()).toBe(true);
    boot('boot-b');
    expect(await watcher.pollOnce()).toBe(true);
    expect(restarts).toBe(1);
  });
});
