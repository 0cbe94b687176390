// The meter's own contract, whatever the wire: options, statuses, the body's form, the WireSample it gives.
import { describe, expect, it } from 'vitest';
import { WireSample } from '../../shared/gateway.ts';
import type { WireProtocol } from '../../shared/gateway.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { usageMeter } from './index.ts';
import { meter, sse } from '../../test/support/gateway-wire-bodies.ts';

const chatBody = sse([
  [null, { model: 'm-1', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] }],
  [null, { model: 'm-1', choices: [], usage: { prompt_tokens: 10, completion_tokens: 2 } }],
  [null, '[DONE]'],
]);
const chatTokens = { input: 10, output: 2, cache_read: 0, cache_write: null, reasoning: 0 };

describe('usageMeter', () => {
  it('refuses a status that is not an HTTP status, and an unknown protocol, naming the field', () => {
    for (const status of [99, 600, 200.5, Number.NaN]) expect(() => usageMeter('anthropic', { status })).toThrow(InvalidInputError);
    expect(() => usageMeter('bedrock' as WireProtocol, { status: 200 })).toThrow(/protocol/);
  });

  it('does not read the body of a non-2xx answer: no tokens, the request model, even if the body holds usage', () => {
    for (const status of [301, 400, 401, 429, 500, 503, 529]) {
      const sample = meter('openai-chat', chatBody, { status, contentType: 'text/event-stream', requestModel: 'asked-model' });
      expect(sample).toEqual({ protocol: 'openai-chat', model: 'asked-model', status, streamed: true, tokens: null });
    }
  });

  it('reads any 2xx', () => {
    expect(meter('openai-chat', chatBody, { status: 206 }).tokens).toEqual(chatTokens);
  });

  it("takes the response's model over the request's, and the request's when the response names none", () => {
    expect(meter('openai-chat', chatBody, { requestModel: 'alias' }).model).toBe('m-1');
    expect(meter('openai-chat', sse([[null, '[DONE]']]), { requestModel: 'alias' }).model).toBe('alias');
    expect(meter('openai-chat', sse([[null, { model: 'x'.repeat(257) }]]), {}).model).toBeNull();
  });

  it('lets the body decide between JSON and SSE, whatever the content type says', () => {
    expect(meter('openai-chat', chatBody, { contentType: 'application/json' })).toMatchObject({ streamed: true, tokens: chatTokens });
    const json = JSON.stringify({ model: 'm-1', choices: [], usage: { prompt_tokens: 10, completion_tokens: 2 } });
    expect(meter('openai-chat', json, { contentType: 'text/event-stream' })).toMatchObject({ streamed: false, tokens: chatTokens });
  });

  it('skips a UTF-8 BOM (cut anywhere) and leading blank lines', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const body of [chatBody, `\n\r\n  ${chatBody}`]) {
      const bytes = Buffer.concat([bom, Buffer.from(body)]);
      for (const size of [1, 2, 4, 1000]) expect(meter('openai-chat', bytes, { sizes: [size] }).tokens).toEqual(chatTokens);
    }
    const json = `\r\n\t {"model":"m-1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2}}`;
    expect(meter('openai-chat', Buffer.concat([bom, Buffer.from(json)]), { sizes: [1] }).tokens).toEqual(chatTokens);
  });

  it('an empty body: no tokens, streamed as the content type says', () => {
    expect(meter('anthropic', '', { contentType: 'text/event-stream; charset=utf-8' })).toEqual({ protocol: 'anthropic', model: null, status: 200, streamed: true, tokens: null });
    expect(meter('anthropic', '  \n', { contentType: 'application/json' })).toMatchObject({ streamed: false, tokens: null });
  });

  it('end() is final: the same sample again, later bytes ignored', () => {
    const m = usageMeter('openai-chat', { status: 200 });
    m.push(Buffer.from(chatBody));
    const first = m.end();
    m.push(Buffer.from(sse([[null, { choices: [], usage: { prompt_tokens: 99, completion_tokens: 99 } }]])));
    expect(m.end()).toBe(first);
    expect(WireSample.parse(first)).toEqual(first);
  });

  it('does not keep the chunks it is given (the caller may reuse its buffer)', () => {
    const m = usageMeter('anthropic', { status: 200 });
    const body = Buffer.from(sse([['message_delta', { type: 'message_delta', usage: { output_tokens: 12345 } }]]));
    const buffer = Buffer.alloc(7);
    for (let at = 0; at < body.length; at += buffer.length) {
      buffer.fill(0x20);
      body.copy(buffer, 0, at, at + buffer.length);
      m.push(buffer.subarray(0, Math.min(buffer.length, body.length - at)));
    }
    expect(m.end().tokens).toMatchObject({ output: 12345 });
  });
});
