// Anthropic Messages API bodies shaped as docs.anthropic.com's streaming and message examples show them.
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../shared/usage.ts';
import { meter, sse } from '../../test/support/gateway-wire-bodies.ts';

const MODEL = 'claude-sonnet-4-5-20250929';

const start = (usage: Record<string, unknown>) => [
  'message_start',
  { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: MODEL, stop_reason: null, stop_sequence: null, usage } },
] as const;
const thinking = [
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'I need "usage": {"output_tokens": 1000}?' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Héllo 😀' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
] as const;
const delta = (usage: Record<string, unknown>) => ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }] as const;
const stop = ['message_stop', { type: 'message_stop' }] as const;
const cacheUsage = { input_tokens: 472, cache_creation_input_tokens: 1200, cache_read_input_tokens: 9800, output_tokens: 2 };

const tokens = (input: number | null, output: number | null, cache_read: number | null, cache_write: number | null): TokenUsage => ({ input, output, cache_read, cache_write, reasoning: null });

describe('anthropic wire usage', () => {
  it.each<[string, string, TokenUsage | null]>([
    ['a stream: message_start input and cache, message_delta output', sse([start(cacheUsage), ...thinking, delta({ output_tokens: 89 }), stop]), tokens(472, 89, 9800, 1200)],
    ['several message_delta: the last cumulative output, not a sum', sse([start(cacheUsage), ...thinking, delta({ output_tokens: 40 }), delta({ output_tokens: 89 }), stop]), tokens(472, 89, 9800, 1200)],
    [
      'a message_delta that restates input and cache (server tools): its values',
      sse([start(cacheUsage), ...thinking, delta({ input_tokens: 10682, cache_creation_input_tokens: 0, cache_read_input_tokens: 9800, output_tokens: 510, server_tool_use: { web_search_requests: 1 } }), stop]),
      tokens(10682, 510, 9800, 0),
    ],
    ['cut after message_start: input and cache as reported, output unknown', sse([start(cacheUsage), ...thinking]), tokens(472, null, 9800, 1200)],
    [
      'an error event mid-stream (overloaded): the same',
      sse([start(cacheUsage), ...thinking, ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]),
      tokens(472, null, 9800, 1200),
    ],
    ['cut before message_start: nothing reported', sse([['ping', { type: 'ping' }]]), null],
    ['cache counts null or absent count 0 (no cache)', sse([start({ input_tokens: 25, output_tokens: 1, cache_creation_input_tokens: null }), delta({ output_tokens: 7 }), stop]), tokens(25, 7, 0, 0)],
    ['a message_delta without its message_start: the prompt side unknown, not 0', sse([...thinking, delta({ output_tokens: 7 }), stop]), tokens(null, 7, null, null)],
    ['an unreadable count: its class null, never 0', sse([start(cacheUsage), delta({ output_tokens: '89' }), stop]), tokens(472, null, 9800, 1200)],
    ['a negative or fractional count: unreadable', sse([start({ ...cacheUsage, input_tokens: -5, cache_read_input_tokens: 1.5 }), delta({ output_tokens: 3 }), stop]), tokens(null, 3, null, 1200)],
    [
      'a JSON body',
      JSON.stringify({ id: 'msg_01', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { ...cacheUsage, output_tokens: 12, cache_creation: { ephemeral_5m_input_tokens: 1200, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' } }),
      tokens(472, 12, 9800, 1200),
    ],
    ['a JSON body cut before usage', `{"id":"msg_01","type":"message","model":"${MODEL}","content":[{"type":"text","text":"Hi`, null],
  ])('%s', (_name, body, expected) => {
    const whole = meter('anthropic', body);
    expect(whole.tokens).toEqual(expected);
    expect(whole.model).toBe(body.includes(MODEL) ? MODEL : null);
    for (const size of [1, 3, 64]) expect(meter('anthropic', body, { sizes: [size] })).toEqual(whole);
  });

  it.each([429, 529, 400, 500])('a %i answer: no tokens, the request model, streamed as its content type says', (status) => {
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } });
    expect(meter('anthropic', body, { status, contentType: 'application/json', requestModel: 'claude-opus-4-1' })).toEqual({ protocol: 'anthropic', model: 'claude-opus-4-1', status, streamed: false, tokens: null });
  });
});
