// The stub model's own answers, fetched from a real stub server on 127.0.0.1 (what the gateway's tests run
// against): metered as they arrive off the socket and in random chunkings, every wire gives exactly the stub's
// StubUsage in the classes it reports.
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import type { WireProtocol } from '../../shared/gateway.ts';
import type { StubUsage } from '../../shared/stub-script.ts';
import { usageMeter } from './index.ts';
import { expectedTokens, meter } from '../../test/support/gateway-wire-bodies.ts';

const SCRIPT_USAGE: StubUsage = { input: 1234, cache_read: 567, cache_write: 89, output: 321, reasoning: 45 };
/** A rule's step with usage of its own (the stub's per-step usage). */
const RULE_USAGE: StubUsage = { input: 7, cache_read: 0, cache_write: 0, output: 0, reasoning: 0 };

let stub: StubModelServer;
beforeAll(async () => {
  stub = await startStubModelServer({
    host: '127.0.0.1',
    script: {
      usage: SCRIPT_USAGE,
      steps: [{ thinking: 'Think about "usage": {"input_tokens": 1} — é 😀', text: 'Créé hello.txt 👋', tool: { name: 'Bash', args: { command: 'printf "x\\n"' } } }, { text: 'Done.' }],
      rules: [
        { when_last_user_contains: 'EMPTY', step: { text: '', usage: RULE_USAGE } },
        { when_last_user_contains: 'OVERLOAD', step: { error: { status: 529, message: 'Overloaded' } } },
      ],
    },
  });
});
afterAll(async () => {
  await stub.close();
});

interface Call {
  name: string;
  protocol: WireProtocol;
  path: string;
  headers: Record<string, string>;
  body: (prompt: string) => Record<string, unknown>;
  streamed: boolean;
}

const MODEL = 'stub-model-1';
const user = (prompt: string) => [{ role: 'user', content: prompt }];
const gemini = (prompt: string) => ({ contents: [{ role: 'user', parts: [{ text: prompt }] }] });
const CALLS: Call[] = [
  { name: 'anthropic sse', protocol: 'anthropic', path: '/v1/messages', headers: { 'x-api-key': 'k' }, body: (p) => ({ model: MODEL, stream: true, messages: user(p) }), streamed: true },
  { name: 'anthropic json', protocol: 'anthropic', path: '/v1/messages', headers: { 'x-api-key': 'k' }, body: (p) => ({ model: MODEL, messages: user(p) }), streamed: false },
  { name: 'openai-responses sse', protocol: 'openai-responses', path: '/v1/responses', headers: { authorization: 'Bearer k' }, body: (p) => ({ model: MODEL, stream: true, input: p }), streamed: true },
  { name: 'openai-responses json', protocol: 'openai-responses', path: '/v1/responses', headers: { authorization: 'Bearer k' }, body: (p) => ({ model: MODEL, stream: false, input: p }), streamed: false },
  { name: 'openai-chat sse', protocol: 'openai-chat', path: '/v1/chat/completions', headers: { authorization: 'Bearer k' }, body: (p) => ({ model: MODEL, stream: true, stream_options: { include_usage: true }, messages: user(p) }), streamed: true },
  { name: 'openai-chat json', protocol: 'openai-chat', path: '/v1/chat/completions', headers: { authorization: 'Bearer k' }, body: (p) => ({ model: MODEL, messages: user(p) }), streamed: false },
  { name: 'gemini sse', protocol: 'gemini', path: `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, headers: { 'x-goog-api-key': 'k' }, body: gemini, streamed: true },
  { name: 'gemini json', protocol: 'gemini', path: `/v1beta/models/${MODEL}:generateContent`, headers: { 'x-goog-api-key': 'k' }, body: gemini, streamed: false },
];

/** Posts to the stub and meters the body chunk by chunk as it comes off the socket; returns the bytes too. */
async function call(c: Call, prompt: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${stub.url}${c.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...c.headers, ...headers }, body: JSON.stringify(c.body(prompt)) });
  const contentType = response.headers.get('content-type');
  const m = usageMeter(c.protocol, { status: response.status, contentType, requestModel: MODEL });
  const parts: Uint8Array[] = [];
  for await (const chunk of response.body!) {
    parts.push(chunk);
    m.push(chunk);
  }
  return { sample: m.end(), bytes: Buffer.concat(parts), status: response.status, contentType };
}

describe.each(CALLS)('the stub model, $name', (c) => {
  it("meters exactly the stub's usage, off the socket and in any chunking", async () => {
    const { sample, bytes, status, contentType } = await call(c, 'Create hello.txt');
    expect(sample).toEqual({ protocol: c.protocol, model: MODEL, status: 200, streamed: c.streamed, tokens: expectedTokens(c.protocol, SCRIPT_USAGE) });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 12 }), (sizes) => {
        expect(meter(c.protocol, bytes, { status, contentType: contentType ?? undefined, requestModel: MODEL, sizes })).toEqual(sample);
      }),
      { numRuns: 100 },
    );
  });

  it("a step's own usage, zeros included", async () => {
    expect((await call(c, 'EMPTY please')).sample.tokens).toEqual(expectedTokens(c.protocol, RULE_USAGE));
  });

  it('an error answer (401, 529): no tokens, the request model', async () => {
    expect((await call(c, 'hi', c.protocol === 'anthropic' ? { 'x-api-key': 'BADKEY' } : c.protocol === 'gemini' ? { 'x-goog-api-key': 'BADKEY' } : { authorization: 'Bearer BADKEY' })).sample).toMatchObject({ status: 401, tokens: null, model: MODEL });
    expect((await call(c, 'OVERLOAD now')).sample).toMatchObject({ status: 529, tokens: null, model: MODEL });
  });
});
