// Every wire the stub model speaks, streamed and not, through the gateway with a minted token: the stub gets the
// real key and never the token, the client gets exactly the stub's bytes, and the run's account holds the stub's
// usage token for token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../driver/stub-models/index.ts';
import type { StubModelServer } from '../driver/stub-models/index.ts';
import { TOKEN_CLASSES } from '../shared/usage.ts';
import type { TokenUsage } from '../shared/usage.ts';
import type { WireProtocol } from '../shared/gateway.ts';
import { WIRE_USAGE_SHAPES } from './usage/index.ts';
import { startGateway } from './server.ts';
import type { Gateway, SampleEvent } from './server.ts';
import { capturedLog, providersAt, REAL_KEYS, SIGNING_KEY, startTap } from './test-helpers.ts';
import type { Tap } from './test-helpers.ts';

const USAGE = { input: 900, cache_read: 300, cache_write: 50, output: 80, reasoning: 12 };

let stub: StubModelServer;
let tap: Tap;
let gateway: Gateway;
const samples: SampleEvent[] = [];
const logged = capturedLog();

beforeAll(async () => {
  stub = await startStubModelServer({
    script: {
      steps: [{ thinking: 'think', text: 'Listing.', tool: { name: 'Bash', args: { command: 'ls' }, id: 'toolu_1' } }, { text: 'Done.' }],
      rules: [{ when_last_user_contains: 'PLEASE-FAIL', step: { error: { status: 429, message: 'rate limited by the stub' } } }],
      usage: USAGE,
    },
  });
  tap = await startTap(stub.url);
  gateway = await startGateway({ providers: providersAt(tap.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log, onSample: (e) => samples.push(e) });
});
afterAll(async () => {
  await gateway.close();
  await tap.close();
  await stub.close();
});

/** What a wire reports of the stub's usage: its classes at the stub's numbers, the others null. */
function expected(protocol: WireProtocol): TokenUsage {
  const classes = WIRE_USAGE_SHAPES[protocol].classes;
  return Object.fromEntries(TOKEN_CLASSES.map((c) => [c, classes.includes(c) ? USAGE[c] : null])) as TokenUsage;
}

interface Case {
  name: string;
  provider: keyof typeof REAL_KEYS;
  protocol: WireProtocol;
  path: string;
  credential: (token: string) => Record<string, string>;
  body: object;
  model: string;
  streamed: boolean;
  /** The header the stub must have received the real key in, and its value. */
  realKeyHeader: [string, string];
}

const anthropic = (stream: boolean): Case => ({
  name: `anthropic messages (${stream ? 'SSE' : 'JSON'})`,
  provider: 'anthropic',
  protocol: 'anthropic',
  path: '/v1/messages?beta=true',
  credential: (t) => ({ 'x-api-key': t }),
  body: { model: 'claude-sonnet-4-5', max_tokens: 1024, stream, messages: [{ role: 'user', content: 'list files' }] },
  model: 'claude-sonnet-4-5',
  streamed: stream,
  realKeyHeader: ['x-api-key', REAL_KEYS.anthropic],
});
const responses = (stream: boolean): Case => ({
  name: `openai responses (${stream ? 'SSE' : 'JSON'})`,
  provider: 'openai',
  protocol: 'openai-responses',
  path: '/v1/responses',
  credential: (t) => ({ authorization: `Bearer ${t}` }),
  body: { model: 'gpt-5.1-codex', stream, input: [{ role: 'user', content: [{ type: 'input_text', text: 'list files' }] }] },
  model: 'gpt-5.1-codex',
  streamed: stream,
  realKeyHeader: ['authorization', `Bearer ${REAL_KEYS.openai}`],
});
const chat = (provider: 'openrouter' | 'dashscope' | 'openai', stream: boolean, model: string): Case => ({
  name: `openai chat via ${provider} (${stream ? 'SSE' : 'JSON'})`,
  provider,
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  credential: (t) => ({ authorization: `Bearer ${t}` }),
  body: { model, stream, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'list files' }] },
  model,
  streamed: stream,
  realKeyHeader: ['authorization', `Bearer ${REAL_KEYS[provider]}`],
});
const gemini = (stream: boolean, viaQuery: boolean): Case => ({
  name: `gemini ${stream ? 'streamGenerateContent (SSE)' : 'generateContent (JSON)'}, key ${viaQuery ? 'in ?key=' : 'in x-goog-api-key'}`,
  provider: 'google',
  protocol: 'gemini',
  path: `/v1beta/models/gemini-2.5-pro:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  credential: (t): Record<string, string> => (viaQuery ? { '?key': t } : { 'x-goog-api-key': t }),
  body: { contents: [{ role: 'user', parts: [{ text: 'list files' }] }] },
  model: 'gemini-2.5-pro',
  streamed: stream,
  realKeyHeader: ['x-goog-api-key', REAL_KEYS.google],
});

const CASES: Case[] = [
  anthropic(true),
  anthropic(false),
  responses(true),
  responses(false),
  chat('openrouter', true, 'anthropic/claude-sonnet-4.5'),
  chat('openrouter', false, 'anthropic/claude-sonnet-4.5'),
  chat('dashscope', true, 'qwen3-coder-plus'),
  chat('openai', false, 'gpt-4.1'),
  gemini(true, false),
  gemini(false, false),
  gemini(true, true),
];

describe('gateway: every stub wire through a minted token', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const run = `run-wire-${i}`;
    const token = gateway.mint(run, 'uid-1', 3600);
    const credential = c.credential(token);
    const queryKey = credential['?key'];
    delete credential['?key'];
    const url = `${gateway.baseUrl(c.provider)}${c.path}${queryKey ? `${c.path.includes('?') ? '&' : '?'}key=${encodeURIComponent(queryKey)}` : ''}`;
    const stubBefore = stub.requests.length;
    const tapBefore = tap.responses.length;

    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...credential }, body: JSON.stringify(c.body) });
    const bytes = Buffer.from(await res.arrayBuffer());

    // The stub saw one request, with the real key where the provider takes it, and nothing of the token.
    expect(stub.requests.length).toBe(stubBefore + 1);
    const seen = stub.requests.at(-1)!;
    expect(seen.headers[c.realKeyHeader[0]]).toBe(c.realKeyHeader[1]);
    expect(JSON.stringify(seen)).not.toContain(token);
    expect(JSON.stringify(seen)).not.toContain('tcabgw_');
    expect(seen.query.key).toBeUndefined();
    expect(seen.body).toEqual(c.body);
    // The client got the stub's status, content type and exact bytes.
    expect(tap.responses.length).toBe(tapBefore + 1);
    const sent = tap.responses.at(-1)!;
    expect(res.status).toBe(200);
    expect(sent.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(sent.headers['content-type']);
    expect(bytes.equals(sent.body)).toBe(true);
    expect(bytes.length).toBeGreaterThan(0);
    const answered = bytes.toString('latin1') + JSON.stringify([...res.headers]);
    for (const key of Object.values(REAL_KEYS)) expect(answered).not.toContain(key);

    // The account holds the stub's usage, token for token.
    await expect.poll(() => gateway.usage(run, 'uid-1')?.requests).toBe(1);
    const account = gateway.usage(run, 'uid-1')!;
    expect(account.tokens).toEqual(expected(c.protocol));
    expect(account.statuses).toEqual({ '200': 1 });
    expect(account.unmetered).toBe(0);
    const sample = samples.find((s) => s.run === run)!.sample;
    expect(sample).toEqual({ protocol: c.protocol, model: c.model, status: 200, streamed: c.streamed, tokens: expected(c.protocol) });
  });

  it.each([
    ['anthropic', '/v1/messages', { 'x-api-key': '' }, { model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'PLEASE-FAIL' }] }],
    ['openai', '/v1/responses', { authorization: 'Bearer ' }, { model: 'gpt-5.1-codex', input: [{ role: 'user', content: [{ type: 'input_text', text: 'PLEASE-FAIL' }] }] }],
    ['google', '/v1beta/models/gemini-2.5-pro:generateContent', { 'x-goog-api-key': '' }, { contents: [{ role: 'user', parts: [{ text: 'PLEASE-FAIL' }] }] }],
  ] as const)("a provider's error answer (%s 429) passes with its status and exact bytes, counted as a throttle", async (provider, path, credential, body) => {
    const run = `run-error-${provider}`;
    const token = gateway.mint(run, 'uid-1', 3600);
    const headers = Object.fromEntries(Object.entries(credential).map(([k, v]) => [k, `${v}${token}`]));
    const res = await fetch(`${gateway.baseUrl(provider)}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const bytes = Buffer.from(await res.arrayBuffer());
    const sent = tap.responses.at(-1)!;
    expect(res.status).toBe(429);
    expect(sent.status).toBe(429);
    expect(bytes.equals(sent.body)).toBe(true);
    expect(res.headers.get('content-length')).toBe(String(sent.body.length));
    await expect.poll(() => gateway.usage(run, 'uid-1')?.requests).toBe(1);
    const model = provider === 'google' ? 'gemini-2.5-pro' : (body as { model: string }).model; // the request's: the answer names none
    expect(gateway.usage(run, 'uid-1')).toMatchObject({ statuses: { '429': 1 }, unmetered: 0, throttles: [{ provider, model, status: 429, count: 1 }] });
  });

  it('prices the measured usage at the catalogue list prices', async () => {
    const token = gateway.mint('run-priced', 'uid-1', 3600);
    const c = anthropic(false);
    await (await fetch(`${gateway.baseUrl('anthropic')}${c.path}`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: JSON.stringify(c.body) })).arrayBuffer();
    await expect.poll(() => gateway.usage('run-priced', 'uid-1')?.requests).toBe(1);
    const account = gateway.usage('run-priced', 'uid-1')!;
    // claude-sonnet-4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    expect(account.cost_usd).toBeCloseTo((900 * 3 + 80 * 15 + 300 * 0.3 + 50 * 3.75) / 1e6, 12);
    expect(account.unpriced_models).toEqual([]);
  });

  it('forwards free endpoints (model list, token count) without metering them', async () => {
    const token = gateway.mint('run-free', 'uid-1', 3600);
    const models = await fetch(`${gateway.baseUrl('openrouter')}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    const count = await fetch(`${gateway.baseUrl('anthropic')}/v1/messages/count_tokens?beta=true`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: '{"model":"claude-sonnet-4-5","messages":[]}' });
    expect(await count.json()).toEqual({ input_tokens: 100 });
    await expect.poll(() => gateway.usage('run-free', 'uid-1')?.requests).toBe(2);
    const account = gateway.usage('run-free', 'uid-1')!;
    expect(account.tokens).toEqual({ input: null, output: null, cache_read: null, cache_write: null, reasoning: null });
    expect(account.unmetered).toBe(0);
  });

  it('exposes Prometheus metrics: requests, upstream statuses, tokens, added latency', async () => {
    const text = await gateway.metrics.metrics();
    expect(text).toMatch(/tcab_gateway_requests_total\{provider="anthropic",outcome="forwarded"\} \d+/);
    expect(text).toMatch(/tcab_gateway_upstream_responses_total\{provider="google",status="200"\} \d+/);
    expect(text).toMatch(/tcab_gateway_tokens_total\{provider="openai",class="input"\} \d+/);
    expect(text).toMatch(/tcab_gateway_added_latency_seconds_count\{provider="anthropic"\} \d+/);
  });

  it('logged no key and no token', () => {
    const all = logged.lines.join('');
    expect(all.length).toBeGreaterThan(0);
    for (const key of Object.values(REAL_KEYS)) expect(all).not.toContain(key);
    expect(all).not.toContain('tcabgw_');
  });
});
