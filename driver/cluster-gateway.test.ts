// A driver Pod's side of the cluster gateway (cluster-gateway.ts), against a real gateway on loopback: the base
// URL the harness gets, the budget refusal and throttles told as they happen, the wire account read at the end,
// and an unreachable gateway giving no wire account (unknown, never guessed).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../gateway/index.ts';
import type { Gateway } from '../gateway/index.ts';
import { providerConfigs } from '../gateway/providers.ts';
import { startStubModelServer } from './stub-models/index.ts';
import type { StubModelServer } from './stub-models/index.ts';
import type { BudgetExceeded, GatewayThrottle } from '../shared/gateway.ts';
import { joinGateway } from './cluster-gateway.ts';

const SILENT = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let stub: StubModelServer;
let gateway: Gateway;

beforeAll(async () => {
  stub = await startStubModelServer({ script: { steps: [{ text: 'hi' }] } });
  gateway = await startGateway({ providers: providerConfigs({ anthropic: { upstream: stub.url } }), keys: { anthropic: 'sk-ant-fake-cluster-key' }, signingKey: Buffer.alloc(32, 9), log: SILENT, adminToken: 'fake-admin-token-0123456789abcdef' });
});
afterAll(async () => {
  await gateway.close();
  await stub.close();
});

const ask = (baseUrl: string, token: string) =>
  fetch(`${baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] }) });

describe('joinGateway', () => {
  it('gives the harness <gateway>/p/<provider>, tells the budget refusal, and reads the wire account', async () => {
    const token = gateway.mint('ns_run-a', 'uid-a', 600, { maxTokens: { total: 1000 } });
    const told: BudgetExceeded[] = [];
    const joined = joinGateway({ url: `${gateway.url}/`, provider: 'anthropic', token, log: SILENT, onBudgetExceeded: (e) => told.push(e), onThrottles: () => undefined });
    expect(joined.baseUrl).toBe(`${gateway.url}/p/anthropic`);
    expect((await ask(joined.baseUrl, token)).status).toBe(200);
    expect((await ask(joined.baseUrl, token)).status).toBe(400);
    await expect.poll(() => told.length).toBe(1);
    expect(told[0]).toMatchObject({ limit: 'maxTokens.total', max: 1000, used: 1330 });
    expect(await joined.wire()).toEqual({ requests: 1, tokens: { input: 900, output: 80, reasoning: null, cache_read: 300, cache_write: 50 }, cost_usd: expect.any(Number), unmetered: 0, throttled: 0, refused: 1 });
    await joined.close();
  });

  it('tells throttles as they grow, with the provider\'s retry-after', async () => {
    const busy = createServer((_req, res) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '4' }).end('{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}'));
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const own = await startGateway({ providers: providerConfigs({ anthropic: { upstream: `http://127.0.0.1:${(busy.address() as AddressInfo).port}` } }), keys: { anthropic: 'sk-ant-fake' }, signingKey: Buffer.alloc(32, 9), log: SILENT });
    const token = own.mint('ns_run-t', 'uid-t', 600);
    const seen: GatewayThrottle[][] = [];
    const joined = joinGateway({ url: own.url, provider: 'anthropic', token, log: SILENT, onBudgetExceeded: () => undefined, onThrottles: (t) => seen.push([...t]) });
    expect((await ask(joined.baseUrl, token)).status).toBe(429);
    await expect.poll(() => seen.length).toBe(1);
    expect((await ask(joined.baseUrl, token)).status).toBe(429);
    await expect.poll(() => seen.at(-1)?.[0]?.count).toBe(2);
    expect(seen.at(-1)).toEqual([{ provider: 'anthropic', model: 'claude-sonnet-4-5', status: 429, count: 2, retry_after_s: 4 }]);
    expect((await joined.wire())?.throttled).toBe(2);
    await joined.close();
    await own.close();
    busy.closeAllConnections();
    busy.close();
  });

  it('an unreachable gateway: no wire account, and close() does not hang on the watch', async () => {
    const joined = joinGateway({ url: 'http://127.0.0.1:9', provider: 'anthropic', token: 'tcabgw_x.y', log: SILENT, onBudgetExceeded: () => undefined, onThrottles: () => undefined });
    expect(await joined.wire()).toBeNull();
    await joined.close();
  });

  it('refuses a gateway URL that is not http(s)', () => {
    expect(() => joinGateway({ url: 'file:///etc/passwd', provider: 'anthropic', token: 't', log: SILENT, onBudgetExceeded: () => undefined, onThrottles: () => undefined })).toThrow('http');
  });
});
