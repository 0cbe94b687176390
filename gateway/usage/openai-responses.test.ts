// OpenAI Responses API bodies shaped as platform.openai.com's streaming events and response object show them.
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../shared/usage.ts';
import { meter, sse } from '../../test/support/gateway-wire-bodies.ts';

const MODEL = 'gpt-5-codex';
const base = { id: 'resp_67c9fdcecf', object: 'response', created_at: 1741290958, model: MODEL };
const usage = { input_tokens: 12000, input_tokens_details: { cached_tokens: 9000 }, output_tokens: 800, output_tokens_details: { reasoning_tokens: 640 }, total_tokens: 12800 };
const opening = [
  ['response.created', { type: 'response.created', sequence_number: 0, response: { ...base, status: 'in_progress', output: [], usage: null } }],
  ['response.in_progress', { type: 'response.in_progress', sequence_number: 1, response: { ...base, status: 'in_progress', output: [], usage: null } }],
  ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }],
  ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_1', output_index: 1, content_index: 0, delta: '{"usage":{"input_tokens":1}}' }],
] as const;
const terminal = (type: string, status: string, u: unknown) => [type, { type, sequence_number: 9, response: { ...base, status, output: [{ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }], usage: u } }] as const;

const tokens = (input: number | null, output: number | null, cache_read: number | null, reasoning: number | null): TokenUsage => ({ input, output, cache_read, cache_write: null, reasoning });

describe('openai-responses wire usage', () => {
  it.each<[string, string, TokenUsage | null]>([
    ['response.completed: input less cached, output with reasoning', sse([...opening, terminal('response.completed', 'completed', usage)]), tokens(3000, 800, 9000, 640)],
    ['response.incomplete (max_output_tokens) still reports', sse([...opening, terminal('response.incomplete', 'incomplete', usage)]), tokens(3000, 800, 9000, 640)],
    ['response.failed without usage: nothing', sse([...opening, terminal('response.failed', 'failed', null)]), null],
    ['cut before the terminal event: nothing', sse(opening), null],
    ['no details objects: nothing cached, no reasoning', sse([...opening, terminal('response.completed', 'completed', { input_tokens: 50, output_tokens: 7, total_tokens: 57 })]), tokens(50, 7, 0, 0)],
    ['cached above input: input 0, as the translators clamp', sse([terminal('response.completed', 'completed', { ...usage, input_tokens_details: { cached_tokens: 20000 } })]), tokens(0, 800, 20000, 640)],
    ['an unreadable cached count: input and cache_read null', sse([terminal('response.completed', 'completed', { ...usage, input_tokens_details: { cached_tokens: '9000' } })]), tokens(null, 800, null, 640)],
    ['a JSON body', JSON.stringify({ ...base, status: 'completed', output: [], usage }), tokens(3000, 800, 9000, 640)],
  ])('%s', (_name, body, expected) => {
    const whole = meter('openai-responses', body);
    expect(whole.tokens).toEqual(expected);
    expect(whole.model).toBe(MODEL);
    for (const size of [1, 5, 100]) expect(meter('openai-responses', body, { sizes: [size] })).toEqual(whole);
  });

  it('a 429: no tokens', () => {
    const body = JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } });
    expect(meter('openai-responses', body, { status: 429, contentType: 'application/json' })).toMatchObject({ status: 429, tokens: null, model: null });
  });
});
