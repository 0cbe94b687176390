// Budgets hold: once a run's measured usage reaches a limit of its budget, its next request is refused in the
// provider's own shape (never forwarded) and the host is told, once. A request in flight when the limit is passed
// completes and is accounted.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../driver/stub-models/index.ts';
import type { StubModelServer } from '../driver/stub-models/index.ts';
import { startGateway } from './server.ts';
import type { BudgetExceededEvent, Gateway } from './server.ts';
import { capturedLog, providersAt, REAL_KEYS, SIGNING_KEY, startUpstream } from './test-helpers.ts';

// The stub's default usage per answer: 900 input + 80 output + 300 cache read + 50 cache write = 1,330 tokens on
// the Anthropic wire; the OpenAI and Gemini wires report no cache writes: 1,280.
const PER_ANSWER = { anthropic: 1330, openai: 1280, google: 1280 };

let stub: StubModelServer;
let gateway: Gateway;
const told: BudgetExceededEvent[] = [];

beforeAll(async () => {
  stub = await startStubModelServer({ script: { steps: [{ text: 'hi' }] } });
  gateway = await startGateway({ providers: providersAt(stub.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: capturedLog().log, onBudgetExceeded: (e) => told.push(e) });
});
afterAll(async () => {
  await gateway.close();
  await stub.close();
});

const anthropic = (token: string, model = 'claude-sonnet-4-5') =>
  fetch(`${gateway.baseUrl('anthropic')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'x' }] }) });
const openai = (token: string) =>
  fetch(`${gateway.baseUrl('openai')}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.1-codex', input: 'x' }) });
const gemini = (token: string) =>
  fetch(`${gateway.baseUrl('google')}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'x-goog-api-key': token, 'content-type': 'application/json' }, body: '{"contents":[]}' });

async function settled(run: string, requests: number) {
  await expect.poll(() => gateway.usage(run, 'uid-1')?.requests).toBe(requests);
}

describe('gateway: budgets', () => {
  it.each([
    ['anthropic', anthropic, 400, { type: 'error', error: { type: 'invalid_request_error' } }],
    ['openai', openai, 403, { error: { type: 'insufficient_quota', code: 'tcab_budget_exceeded', param: null } }],
    ['google', gemini, 403, { error: { code: 403, status: 'PERMISSION_DENIED' } }],
  ] as const)('a budget of N tokens: the request after the run reaches N is refused (%s shape), the host told once', async (provider, send, status, shape) => {
    const run = `run-budget-${provider}`;
    const n = PER_ANSWER[provider];
    const token = gateway.mint(run, 'uid-1', 600, { maxTokens: { total: n } });
    expect((await send(token)).status).toBe(200);
    await settled(run, 1);
    expect(gateway.usage(run, 'uid-1')!.budget_exceeded).toBeNull();
    const before = stub.requests.length;
    const refused = await send(token);
    expect(refused.status).toBe(status);
    expect(refused.headers.get('x-tcab-gateway')).toBe('budget_exceeded');
    expect(refused.headers.get('x-should-retry')).toBe('false');
    const body = (await refused.json()) as { error: { message: string } };
    expect(body).toMatchObject(shape);
    expect(body.error.message).toContain('budget exceeded');
    expect((await send(token)).status).toBe(status);
    expect(stub.requests.length).toBe(before); // never forwarded
    const mine = told.filter((e) => e.run === run);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.exceeded).toMatchObject({ limit: 'maxTokens.total', max: n, used: n });
    expect(gateway.usage(run, 'uid-1')).toMatchObject({ requests: 1, refused: 2, budget_exceeded: { limit: 'maxTokens.total' } });
  });

  it('below the limit requests pass; a limit by class counts that class only; every provider of the run shares one account', async () => {
    const run = 'run-budget-class';
    const token = gateway.mint(run, 'uid-1', 600, { maxTokens: { output: 3 * 80 } });
    expect((await anthropic(token)).status).toBe(200);
    await settled(run, 1);
    expect((await openai(token)).status).toBe(200);
    await settled(run, 2);
    expect((await gemini(token)).status).toBe(200);
    await settled(run, 3);
    expect(gateway.usage(run, 'uid-1')!.tokens.output).toBe(240);
    expect((await anthropic(token)).status).toBe(400);
    expect(told.find((e) => e.run === run)!.exceeded).toMatchObject({ limit: 'maxTokens.output', used: 240, max: 240 });
  });

  it('a cost limit at list prices; a model the catalogue cannot price fails it closed', async () => {
    const priced = gateway.mint('run-cost', 'uid-1', 600, { maxCostUsd: 0.005 });
    expect((await anthropic(priced)).status).toBe(200); // ~$0.0042 at Sonnet 4.5 prices
    await settled('run-cost', 1);
    expect((await anthropic(priced)).status).toBe(200);
    await settled('run-cost', 2);
    expect((await anthropic(priced)).status).toBe(400);
    expect(told.find((e) => e.run === 'run-cost')!.exceeded).toMatchObject({ limit: 'maxCostUsd', max: 0.005 });

    const unpriced = gateway.mint('run-unpriced', 'uid-1', 600, { maxCostUsd: 100 });
    expect((await anthropic(unpriced, 'claude-made-up-9')).status).toBe(200);
    await settled('run-unpriced', 1);
    const refused = await anthropic(unpriced);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('claude-made-up-9');
    expect(told.find((e) => e.run === 'run-unpriced')!.exceeded).toMatchObject({ limit: 'maxCostUsd', used: null });
  });

  it('a request in flight when the limit is passed completes; the next one is refused', async () => {
    const release: (() => void)[] = [];
    const held: ServerResponse[] = [];
    const upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const start = (input: number) => `event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":${input},"output_tokens":1}}}\n\n`;
      const end = 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":10}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
      res.write(start(100));
      held.push(res);
      release.push(() => res.end(end));
    });
    const events: BudgetExceededEvent[] = [];
    const g = await startGateway({ providers: providersAt(upstream.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: capturedLog().log, onBudgetExceeded: (e) => events.push(e) });
    try {
      const token = g.mint('run-flight', 'u', 600, { maxTokens: { total: 150 } });
      const send = () => fetch(`${g.baseUrl('anthropic')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': token }, body: '{"model":"claude-sonnet-4-5","stream":true}' });
      const a = await send();
      const b = await send(); // both admitted: nothing is accounted yet
      expect([a.status, b.status]).toEqual([200, 200]);
      await expect.poll(() => release.length).toBe(2);
      release[0]!();
      const textA = await a.text();
      await expect.poll(() => g.usage('run-flight', 'u')?.requests).toBe(1); // 110 tokens: under 150
      release[1]!(); // passes the limit (220) while in flight: it completes whole
      const textB = await b.text();
      expect(textB).toBe(textA);
      expect(textB).toContain('message_stop');
      await expect.poll(() => g.usage('run-flight', 'u')?.requests).toBe(2);
      expect(g.usage('run-flight', 'u')!.tokens.input).toBe(200);
      expect((await send()).status).toBe(400);
      expect(events).toHaveLength(1);
      expect(held).toHaveLength(2); // the refused request never reached the upstream
    } finally {
      await g.close();
      await upstream.close();
    }
  });
});
