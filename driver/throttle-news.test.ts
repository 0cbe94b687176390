import { describe, expect, it } from 'vitest';
import { throttleMessage, throttleNews } from './throttle-news.ts';

const row = (model: string, count: number, retry: number | null = 5) => ({ provider: 'anthropic', model, status: 429, count, retry_after_s: retry });

describe('throttleNews', () => {
  it('reports each row whose count grew, once per growth, with how many are new', () => {
    let seen = new Map<string, number>();
    const first = throttleNews(seen, [row('a', 1)]);
    expect(first.news).toEqual([{ ...row('a', 1), added: 1 }]);
    seen = first.seen;
    expect(throttleNews(seen, [row('a', 1)]).news).toEqual([]);
    const third = throttleNews(seen, [row('a', 3), row('b', 1, null)]);
    expect(third.news.map((n) => [n.model, n.added])).toEqual([['a', 2], ['b', 1]]);
  });

  it('says the provider, status, model and retry-after', () => {
    expect(throttleMessage({ ...row('claude-x', 2), added: 2 })).toBe('provider throttled: anthropic answered 429 for claude-x (2 times; retry after 5 s)');
    expect(throttleMessage({ ...row('claude-x', 1, null), added: 1 })).toBe('provider throttled: anthropic answered 429 for claude-x (once; no retry-after given)');
  });
});
