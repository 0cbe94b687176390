// OpenAI Chat Completions bodies, from OpenAI and from OpenAI-compatible servers (OpenRouter, DashScope, DeepSeek,
// vLLM), shaped as their docs show them.
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../shared/usage.ts';
import { meter, sse } from '../../test/support/gateway-wire-bodies.ts';

const MODEL = 'qwen3-coder-plus';
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null, extra: Record<string, unknown> = {}) => [null, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta, finish_reason }], ...extra }] as const;
const usageChunk = (usage: unknown) => [null, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [], usage }] as const;
const DONE = [null, '[DONE]'] as const;
const openai = { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 128, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } };
const body = [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'think "usage"' }), chunk({ content: 'Hé 😀' }), chunk({}, 'stop')] as const;

const tokens = (input: number | null, output: number | null, cache_read: number | null, reasoning: number | null): TokenUsage => ({ input, output, cache_read, cache_write: null, reasoning });

describe('openai-chat wire usage', () => {
  it.each<[string, string, TokenUsage | null]>([
    ['include_usage: the last chunk with empty choices', sse([...body, usageChunk(openai), DONE]), tokens(86, 300, 1920, 128)],
    ['no usage chunk (include_usage not asked): nothing', sse([...body, DONE]), null],
    ['usage: null in every chunk, then the usage chunk', sse([...body.map(([n, d]) => [n, { ...d, usage: null }] as const), usageChunk(openai), DONE]), tokens(86, 300, 1920, 128)],
    [
      'OpenRouter: cost and cost_details ignored',
      sse([...body, usageChunk({ prompt_tokens: 194, completion_tokens: 2, total_tokens: 196, cost: 0.95, is_byok: false, cost_details: { upstream_inference_cost: 19 }, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }), DONE]),
      tokens(194, 2, 0, 0),
    ],
    ['DeepSeek: prompt_cache_hit_tokens when there are no details', sse([...body, usageChunk({ prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050, prompt_cache_hit_tokens: 800, prompt_cache_miss_tokens: 200 }), DONE]), tokens(200, 50, 800, 0)],
    ['vLLM: prompt_tokens_details null (nothing cached reported)', sse([...body, usageChunk({ prompt_tokens: 40, completion_tokens: 9, total_tokens: 49, prompt_tokens_details: null }), DONE]), tokens(40, 9, 0, 0)],
    [
      'usage in every chunk, cumulative: the last',
      sse([chunk({ content: 'a' }, null, { usage: { prompt_tokens: 70, completion_tokens: 1 } }), chunk({ content: 'b' }, null, { usage: { prompt_tokens: 70, completion_tokens: 2 } }), chunk({}, 'stop', { usage: { prompt_tokens: 70, completion_tokens: 3 } }), DONE]),
      tokens(70, 3, 0, 0),
    ],
    ['cumulative usage cut before any finish: prompt side only', sse([chunk({ content: 'a' }, null, { usage: { prompt_tokens: 70, completion_tokens: 1 } }), chunk({ content: 'b' }, null, { usage: { prompt_tokens: 70, completion_tokens: 2 } })]), tokens(70, null, 0, null)],
    [
      'the finish chunk cut inside its usage: the earlier, smaller usage is not final',
      sse([chunk({ content: 'a' }, null, { usage: { prompt_tokens: 70, completion_tokens: 1 } }), chunk({}, 'stop', { usage: { prompt_tokens: 70, completion_tokens: 3 } })]).slice(0, -20),
      tokens(70, null, 0, null),
    ],
    ['a usage without prompt_tokens: the prompt side unknown, not 0', sse([...body, usageChunk({ completion_tokens: 4, completion_tokens_details: { reasoning_tokens: 1 } }), DONE]), tokens(null, 4, null, 1)],
    ['a usage of other keys only (cost): nothing', sse([...body, usageChunk({ cost: 0.01 }), DONE]), null],
    ['[DONE] ends a stream that never said finish_reason', sse([chunk({ content: 'a' }), usageChunk({ prompt_tokens: 5, completion_tokens: 4 }), DONE]), tokens(5, 4, 0, 0)],
    ['the usage chunk arrived, [DONE] did not: still final', sse([...body, usageChunk(openai)]), tokens(86, 300, 1920, 128)],
    [
      'a JSON body',
      JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: MODEL, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: openai }),
      tokens(86, 300, 1920, 128),
    ],
  ])('%s', (_name, text, expected) => {
    const whole = meter('openai-chat', text);
    expect(whole.tokens).toEqual(expected);
    expect(whole.model).toBe(MODEL);
    expect(whole.streamed).toBe(!text.startsWith('{'));
    for (const size of [1, 7, 100]) expect(meter('openai-chat', text, { sizes: [size] })).toEqual(whole);
  });
});
