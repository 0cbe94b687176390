// Gemini generateContent / streamGenerateContent bodies shaped as ai.google.dev shows them: SSE (alt=sse), the
// streamed JSON array, and a plain body. Counts of 0 are left out, as the API's proto3 JSON does.
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../shared/usage.ts';
import { meter, sse } from '../../test/support/gateway-wire-bodies.ts';

const MODEL = 'gemini-2.5-pro';
const chunk = (text: string, usageMetadata: Record<string, number>, finishReason?: string) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
  usageMetadata: { ...usageMetadata, totalTokenCount: Object.values(usageMetadata).reduce((a, b) => a + b, 0) },
  modelVersion: MODEL,
  responseId: 'mJ3Gaf',
});
// Cumulative: the prompt counts are there from the first chunk, candidates and thoughts grow.
const chunks = [
  chunk('**Thinking** about "usageMetadata"', { promptTokenCount: 5200, cachedContentTokenCount: 4096, thoughtsTokenCount: 310 }),
  chunk('Hé', { promptTokenCount: 5200, cachedContentTokenCount: 4096, candidatesTokenCount: 2, thoughtsTokenCount: 310 }),
  chunk('llo 😀', { promptTokenCount: 5200, cachedContentTokenCount: 4096, candidatesTokenCount: 25, thoughtsTokenCount: 310 }, 'STOP'),
];

const tokens = (input: number | null, output: number | null, cache_read: number | null, reasoning: number | null): TokenUsage => ({ input, output, cache_read, cache_write: null, reasoning });

describe('gemini wire usage', () => {
  it.each<[string, string, TokenUsage | null, boolean]>([
    ['SSE (alt=sse): the last cumulative chunk, output = candidates + thoughts', sse(chunks.map((c) => [null, c] as const)), tokens(1104, 335, 4096, 310), true],
    ['SSE cut before the finish: prompt side only', sse(chunks.slice(0, 2).map((c) => [null, c] as const)), tokens(1104, null, 4096, null), true],
    ['the streamed JSON array (no alt=sse)', `[${chunks.map((c) => JSON.stringify(c, null, 2)).join('\r\n,\r\n')}]`, tokens(1104, 335, 4096, 310), true],
    ['the streamed JSON array cut in its third element', `[${chunks.map((c) => JSON.stringify(c)).join(',')}]`.slice(0, -60), tokens(1104, null, 4096, null), true],
    ['a generateContent body, counts of 0 left out', JSON.stringify(chunk('Hi', { promptTokenCount: 12, candidatesTokenCount: 3 }, 'STOP')), tokens(12, 3, 0, 0), false],
    ['toolUsePromptTokenCount is prompt input counted apart', JSON.stringify(chunk('Hi', { promptTokenCount: 12, toolUsePromptTokenCount: 400, candidatesTokenCount: 3 }, 'STOP')), tokens(412, 3, 0, 0), false],
    [
      'a blocked prompt: the prompt, no candidates',
      sse([[null, { promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, modelVersion: MODEL }]]),
      tokens(9, 0, 0, 0),
      true,
    ],
    ['an unreadable thoughts count: output and reasoning null', JSON.stringify({ ...chunk('Hi', { promptTokenCount: 12 }, 'STOP'), usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3, thoughtsTokenCount: 'x' } }), tokens(12, null, 0, null), false],
    ['no usageMetadata at all: nothing', sse([[null, { candidates: [], modelVersion: MODEL }]]), null, true],
  ])('%s', (_name, text, expected, streamed) => {
    const whole = meter('gemini', text);
    expect(whole.tokens).toEqual(expected);
    expect(whole.model).toBe(MODEL);
    expect(whole.streamed).toBe(streamed);
    for (const size of [1, 9, 200]) expect(meter('gemini', text, { sizes: [size] })).toEqual(whole);
  });
});
