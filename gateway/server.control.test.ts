// The control routes a cluster's driver and dispatcher use (control.ts): a run reads and watches only its own
// account with its own token; only the admin token revokes or reads the back-pressure report; a revoked run's token
// is refused on every route from then on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../driver/stub-models/index.ts';
import type { StubModelServer } from '../driver/stub-models/index.ts';
import { startGateway } from './server.ts';
import type { Gateway } from './server.ts';
import { GATEWAY_CONTROL, GatewayRunUsage, ThrottleReport, WatchAnswer } from '../shared/gateway.ts';
import { capturedLog, providersAt, REAL_KEYS, SIGNING_KEY, startUpstream } from './test-helpers.ts';
import { providerConfigs } from './providers.ts';

const ADMIN = 'fake-admin-token-0123456789abcdef';
let stub: StubModelServer;
let busy: Awaited<ReturnType<typeof startUpstream>>;
let gateway: Gateway;
let bare: Gateway;
const { log, lines } = capturedLog();

beforeAll(async () => {
  stub = await startStubModelServer({ script: { steps: [{ text: 'hi' }] } });
  // OpenAI's upstream throttles the model "gpt-busy" (429, retry-after 7) and answers the others through the stub.
  busy = await startUpstream((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      if (body.includes('gpt-busy')) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end('{"error":{"type":"rate_limit_exceeded","message":"slow down"}}');
        return;
      }
      void fetch(`${stub.url}${req.url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
      });
    });
  });
  const providers = providerConfigs({ anthropic: { upstream: stub.url }, openai: { upstream: busy.url } });
  gateway = await startGateway({ providers, keys: REAL_KEYS, signingKey: SIGNING_KEY, log, adminToken: ADMIN });
  bare = await startGateway({ providers: providersAt(stub.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log });
});
afterAll(async () => {
  await gateway.close();
  await bare.close();
  await busy.close();
  await stub.close();
});

const get = (path: string, token?: string, on = gateway) => fetch(`${on.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
const revoke = (body: unknown, token: string | null = ADMIN, on = gateway) =>
  fetch(`${on.url}${GATEWAY_CONTROL.revoke}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
const anthropic = (token: string) =>
  fetch(`${gateway.baseUrl('anthropic')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
const openai = (token: string, model: string) =>
  fetch(`${gateway.baseUrl('openai')}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'x' }) });
const usageOf = async (token: string) => GatewayRunUsage.parse(await (await get(GATEWAY_CONTROL.usage, token)).json());

describe('gateway control routes', () => {
  it('healthz answers without a credential; a control route with the wrong method is a 405 naming the one it takes', async () => {
    expect((await get(GATEWAY_CONTROL.healthz)).status).toBe(200);
    const wrong = await fetch(`${gateway.url}${GATEWAY_CONTROL.usage}`, { method: 'POST' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it("usage: a run's token reads its own attempt's account (nothing reported before its first request), token for token what the stub served", async () => {
    const token = gateway.mint('run-usage', 'uid-1', 600);
    const before = await usageOf(token);
    expect(before).toMatchObject({ run: 'run-usage', attempt: 'uid-1', requests: 0, tokens: { input: null, output: null } });
    await (await anthropic(token)).text();
    await expect.poll(async () => (await usageOf(token)).requests).toBe(1);
    // The stub's default usage on the Anthropic wire.
    expect((await usageOf(token)).tokens).toMatchObject({ input: 900, output: 80, cache_read: 300, cache_write: 50 });
    // Another run's token sees its own (empty) account, never this one's.
    expect((await usageOf(gateway.mint('run-other', 'uid-1', 600))).requests).toBe(0);
  });

  it('usage and watch refuse a missing, forged or expired token with a 401 that echoes nothing', async () => {
    const forged = `${gateway.mint('run-x', 'uid-1', 600).slice(0, -4)}AAAA`;
    for (const token of [undefined, 'sk-not-a-token', forged]) {
      for (const route of [GATEWAY_CONTROL.usage, `${GATEWAY_CONTROL.watch}?wait=0`]) {
        const res = await get(route, token);
        expect(res.status).toBe(401);
        const text = await res.text();
        if (token) expect(text).not.toContain(token);
      }
    }
  });

  it('watch: a waiting watch is answered when the run reaches its budget; at once when it already has', async () => {
    const token = gateway.mint('run-watch', 'uid-1', 600, { maxTokens: { total: 1000 } });
    const waiting = get(`${GATEWAY_CONTROL.watch}?wait=55&throttled=0`, token).then(async (r) => WatchAnswer.parse(await r.json()));
    await (await anthropic(token)).text(); // 1,330 tokens: past the limit, accounted
    expect((await anthropic(token)).status).toBe(400); // refused
    const answer = await waiting;
    expect(answer.exceeded).toMatchObject({ limit: 'maxTokens.total', max: 1000, used: 1330 });
    const again = WatchAnswer.parse(await (await get(`${GATEWAY_CONTROL.watch}?wait=55`, token)).json());
    expect(again.exceeded?.limit).toBe('maxTokens.total');
  });

  it('watch: a new throttle answers it with the provider, model, status and retry-after; a bad wait is a 400', async () => {
    const token = gateway.mint('run-throttled', 'uid-1', 600);
    const waiting = get(`${GATEWAY_CONTROL.watch}?wait=55&throttled=0`, token).then(async (r) => WatchAnswer.parse(await r.json()));
    expect((await openai(token, 'gpt-busy')).status).toBe(429);
    const answer = await waiting;
    expect(answer.exceeded).toBeNull();
    expect(answer.throttles).toEqual([{ provider: 'openai', model: 'gpt-busy', status: 429, count: 1, retry_after_s: 7 }]);
    expect((await get(`${GATEWAY_CONTROL.watch}?wait=61`, token)).status).toBe(400);
    expect((await get(`${GATEWAY_CONTROL.watch}?throttled=-1`, token)).status).toBe(400);
  });

  it('throttles: the admin token reads back-pressure per provider+model across runs, with the good answers since', async () => {
    const token = gateway.mint('run-pressure', 'uid-1', 600);
    expect((await openai(token, 'gpt-busy')).status).toBe(429);
    expect((await openai(token, 'gpt-5.1-codex')).status).toBe(200);
    expect((await get(GATEWAY_CONTROL.throttles)).status).toBe(401);
    expect((await get(GATEWAY_CONTROL.throttles, token)).status).toBe(401); // a run's token is not the admin's
    const report = ThrottleReport.parse(await (await get(GATEWAY_CONTROL.throttles, ADMIN)).json());
    const busyRow = report.throttles.find((t) => t.model === 'gpt-busy');
    expect(busyRow).toMatchObject({ provider: 'openai', status: 429, retry_after_s: 7, ok_since: 0 });
    expect(busyRow!.count).toBeGreaterThanOrEqual(1);
    expect(report.throttles.some((t) => t.model === 'gpt-5.1-codex')).toBe(false);
  });

  it('revoke: only the admin token; a bad body names its field; after it the run is refused on every route', async () => {
    const token = gateway.mint('run-done', 'uid-7', 600);
    expect((await anthropic(token)).status).toBe(200);
    expect((await revoke({ run: 'run-done', attempt: 'uid-7' }, null)).status).toBe(401);
    expect((await revoke({ run: 'run-done', attempt: 'uid-7' }, 'fake-admin-token-0123456789abcdeX')).status).toBe(401);
    expect((await revoke({ run: 'run-done', attempt: 'uid-7' }, token)).status).toBe(401);
    const bad = await revoke({ run: 'run-done' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('attempt');
    expect((await revoke({ run: 'run-done', attempt: 'uid-7' })).status).toBe(204);
    expect((await revoke({ run: 'run-done', attempt: 'uid-7' })).status).toBe(204); // idempotent
    expect((await anthropic(token)).status).toBe(401);
    expect((await get(GATEWAY_CONTROL.usage, token)).status).toBe(401);
    // Another attempt of the same run name (a Run re-created under its name) is not revoked with it.
    expect((await anthropic(gateway.mint('run-done', 'uid-8', 600))).status).toBe(200);
    expect(lines.join('\n')).not.toContain(token);
    expect(lines.join('\n')).not.toContain(ADMIN);
  });

  it('revoke refuses a body that is not JSON or is over 4 KiB, revoking nothing', async () => {
    const token = gateway.mint('run-hostile', 'uid-1', 600);
    const post = (body: string) => fetch(`${gateway.url}${GATEWAY_CONTROL.revoke}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body });
    expect((await post('{"run": "run-hostile",')).status).toBe(400);
    // Over the limit: a 413, or the connection cut while the client still sends (the gateway stops reading).
    expect((await post(JSON.stringify({ run: 'run-hostile', attempt: 'uid-1', pad: 'x'.repeat(8192) })).catch(() => ({ status: 413 }))).status).toBe(413);
    expect((await post(JSON.stringify({ run: 'run-hostile', attempt: ['uid-1'] }))).status).toBe(400);
    expect((await get(GATEWAY_CONTROL.usage, token)).status).toBe(200);
  });

  it('a gateway without an admin token (a workstation driver\'s) has no admin routes', async () => {
    expect((await revoke({ run: 'r', attempt: 'a' }, ADMIN, bare)).status).toBe(404);
    expect((await get(GATEWAY_CONTROL.throttles, ADMIN, bare)).status).toBe(404);
  });

  it('closing the gateway answers an open watch', async () => {
    const own = await startGateway({ providers: providersAt(stub.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log });
    const waiting = fetch(`${own.url}${GATEWAY_CONTROL.watch}?wait=55`, { headers: { authorization: `Bearer ${own.mint('run-c', 'a', 600)}` } }).then((r) => r.status, () => 'closed');
    await expect.poll(() => own.usage('run-c', 'a') === undefined).toBe(true);
    await own.close();
    expect([200, 'closed']).toContain(await waiting);
  });
});
