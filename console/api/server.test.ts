// The HTTP layer over a real fastify server on loopback; the store is an in-memory map (the apiserver-backed
// store is exercised by the cluster suite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import { connect } from 'node:net';
import { once } from 'node:events';
import { buildApi, closeApi, tokenMatches } from './server.ts';
import { buildMetricsServer } from '../../dispatcher/api/metrics.ts';
import type { ReadinessInputs } from './server.ts';
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';

const TOKEN = 'fake-api-token-0123456789';
const READ_TOKEN = 'fake-api-read-token-0123456789';
const stored = new Map<string, HarnessConfigSpec>([['codex', { maxParallelism: 2 }]]);
const state: ReadinessInputs = { informersSynced: true, natsConnected: true, leader: true };
const app = buildApi({
  store: { list: async () => stored, set: async (slug, spec) => void stored.set(slug, spec) },
  slugs: () => ['claude', 'codex', 'gg'],
  token: () => TOKEN,
  readAuth: { mode: 'token', readToken: () => READ_TOKEN },
  readiness: () => state,
});
let url: string;
beforeAll(async () => {
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => app.close());

const post = (slug: string, body: unknown, token?: string) =>
  fetch(`${url}/harness-config/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

describe('harness-config API', () => {
  it('GET needs the read token (or the write token): 401 without, with a wrong one, or with a session cookie that is not one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Bearer ${READ_TOKEN}x` }, { cookie: `tcab_console_session=${READ_TOKEN}` }]) {
      const res = await fetch(`${url}/harness-config`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(await res.text()).not.toContain('codex');
    }
    expect((await fetch(`${url}/harness-config`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('GET lists every harness with its config or the defaults', async () => {
    const res = await fetch(`${url}/harness-config`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { slug: 'claude', maxParallelism: null, default: true },
      { slug: 'codex', maxParallelism: 2, default: false },
      { slug: 'gg', maxParallelism: null, default: true },
    ]);
  });

  it('POST needs the write token: 401 without it, with a wrong one, or with the read token', async () => {
    expect((await post('claude', { maxParallelism: 1 })).status).toBe(401);
    expect((await post('claude', { maxParallelism: 1 }, 'wrong-token')).status).toBe(401);
    expect((await post('claude', { maxParallelism: 1 }, READ_TOKEN)).status).toBe(401);
    expect(stored.has('claude')).toBe(false);
  });

  it('POST validates the body and names the field; unknown slugs are 404', async () => {
    const bad = await post('claude', { maxParallelism: -1 }, TOKEN);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^maxParallelism: /);
    expect((await post('claude', { maxParallelism: 1, extra: true }, TOKEN)).status).toBe(400);
    expect((await post('nope', { maxParallelism: 1 }, TOKEN)).status).toBe(404);
  });

  it('POST sets a cap (gg included) and null means unlimited', async () => {
    const res = await post('gg', { maxParallelism: 3 }, TOKEN);
    expect(res.status).toBe(200);
    expect(stored.get('gg')).toEqual({ maxParallelism: 3 });
    expect((await post('gg', { maxParallelism: null }, TOKEN)).status).toBe(200);
    expect(stored.get('gg')).toEqual({ maxParallelism: null });
  });

  it('serves health and readiness without a credential (the kubelet probes them); /metrics is not on this port', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).status).toBe(404);
  });

  it('/readyz: not ready until the caches sync, not ready while NATS is down, leadership reported either way', async () => {
    const readyz = async () => {
      const res = await fetch(`${url}/readyz`);
      return { status: res.status, body: await res.json() };
    };
    try {
      Object.assign(state, { informersSynced: false, natsConnected: true, leader: false });
      expect(await readyz()).toEqual({ status: 503, body: { ready: false, informers: 'syncing', nats: 'connected', role: 'follower' } });
      state.informersSynced = true; // synced: a follower with warm caches and NATS is ready
      expect(await readyz()).toEqual({ status: 200, body: { ready: true, informers: 'synced', nats: 'connected', role: 'follower' } });
      state.natsConnected = false;
      expect(await readyz()).toEqual({ status: 503, body: { ready: false, informers: 'synced', nats: 'disconnected', role: 'follower' } });
      Object.assign(state, { natsConnected: true, leader: true });
      expect(await readyz()).toEqual({ status: 200, body: { ready: true, informers: 'synced', nats: 'connected', role: 'leader' } });
      state.informersSynced = false; // a watch failed and is restarting
      expect((await readyz()).status).toBe(503);
    } finally {
      Object.assign(state, { informersSynced: true, natsConnected: true, leader: true });
    }
  });
});

describe('metrics server', () => {
  it('serves the registry on /metrics, unauthenticated (Prometheus), and nothing else', async () => {
    const registry = new Registry();
    new Counter({ name: 'tcab_test_total', help: 'a test counter', registers: [registry] }).inc(3);
    const metrics = buildMetricsServer(registry);
    const base = await metrics.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('tcab_test_total 3');
      for (const path of ['/harness-config', '/api/console/runs/stream', '/healthz']) expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    } finally {
      await metrics.close();
    }
  });
});

describe('tokenMatches', () => {
  it('compares in constant time over hashes and rejects empty tokens', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('', 'abc')).toBe(false);
    expect(tokenMatches(undefined, 'abc')).toBe(false);
    expect(tokenMatches('abc', '')).toBe(false);
  });
});

describe('closeApi', () => {
  it('ends with a request in flight that never completes (fastify close() alone waits for it) and an idle keep-alive connection', async () => {
    const api = buildApi({ store: { list: async () => new Map(), set: async () => undefined }, slugs: () => ['gg'], token: () => TOKEN, readAuth: { mode: 'token', readToken: () => READ_TOKEN }, readiness: () => ({ informersSynced: true, natsConnected: true, leader: false }) });
    let received: () => void;
    const inFlight = new Promise<void>((resolve) => (received = resolve));
    api.addHook('onRequest', async (req) => void (req.method === 'POST' && received()));
    const address = new URL(await api.listen({ host: '127.0.0.1', port: 0 }));
    expect((await fetch(`${address.origin}/healthz`)).status).toBe(200); // leaves an idle keep-alive connection
    // Headers promise a body that never comes: once the server has the headers, the request is in flight.
    const slow = connect(Number(address.port), '127.0.0.1');
    await once(slow, 'connect');
    slow.resume();
    const cut = once(slow, 'close');
    slow.write(`POST /harness-config/gg HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"max`);
    await inFlight;
    const outcome = await Promise.race([closeApi(api, 200).then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still closing after 10 s'))]);
    expect(outcome).toBe('closed');
    await cut; // the slow client's connection was cut, not left open
  });
});
