import { describe, expect, it } from 'vitest';
import { afterWatch, continueToken, isGone, listAllPages } from './lean-informer.ts';
import type { ListPage } from './lean-informer.ts';

const gone = () => Object.assign(new Error('Gone'), { statusCode: 410 });
const item = (n: number) => ({ metadata: { name: `o${n}` }, bulk: 'x'.repeat(100) });
type Item = ReturnType<typeof item>;

describe('listAllPages', () => {
  it('follows continue tokens (typed `_continue` or custom objects\' `continue`) and transforms each item', async () => {
    const asked: (string | undefined)[] = [];
    const pages: ListPage<Item>[] = [
      { items: [item(1), item(2)], metadata: { resourceVersion: '10', _continue: 't1' } },
      { items: [item(3), item(4)], metadata: { resourceVersion: '10', continue: 't2' } },
      { items: [item(5)], metadata: { resourceVersion: '10' } },
    ];
    const { items, resourceVersion } = await listAllPages<Item>(async ({ limit, _continue }) => {
      expect(limit).toBe(2);
      asked.push(_continue);
      return pages[asked.length - 1]!;
    }, 2, (o) => ({ metadata: o.metadata, bulk: '' }));
    expect(asked).toEqual([undefined, 't1', 't2']);
    expect(items.map((o) => o.metadata.name)).toEqual(['o1', 'o2', 'o3', 'o4', 'o5']);
    expect(items.every((o) => o.bulk === '')).toBe(true);
    expect(resourceVersion).toBe('10');
  });

  it('starts over when a continue token has expired (410), keeping nothing of the broken list', async () => {
    const asked: (string | undefined)[] = [];
    const { items, resourceVersion } = await listAllPages<Item>(async ({ _continue }) => {
      asked.push(_continue);
      if (asked.length === 1) return { items: [item(1)], metadata: { resourceVersion: '5', _continue: 'old' } };
      if (asked.length === 2) throw gone();
      if (asked.length === 3) return { items: [item(1)], metadata: { resourceVersion: '9', _continue: 'new' } };
      return { items: [item(2)], metadata: { resourceVersion: '9' } };
    }, 1, (o) => o);
    expect(asked).toEqual([undefined, 'old', undefined, 'new']);
    expect(items.map((o) => o.metadata.name)).toEqual(['o1', 'o2']);
    expect(resourceVersion).toBe('9');
  });

  it('a 410 on the first page, or any other error, is the caller\'s', async () => {
    await expect(listAllPages(async () => Promise.reject(gone()), 1, (o) => o)).rejects.toThrow('Gone');
    const forbidden = Object.assign(new Error('Forbidden'), { code: 403 });
    await expect(listAllPages(async ({ _continue }) => (_continue ? Promise.reject(forbidden) : { items: [], metadata: { _continue: 't' } }), 1, (o) => o)).rejects.toBe(forbidden);
  });

  it('an empty list may come back with `items: null`', async () => {
    expect(await listAllPages(async () => ({ items: null, metadata: { resourceVersion: '3' } }), 10, (o) => o)).toEqual({ items: [], resourceVersion: '3' });
  });
});

describe('afterWatch', () => {
  it('relists after 410, resumes at once after the inactivity timeout, backs off after a close, fails otherwise', () => {
    expect(afterWatch(gone())).toBe('relist');
    expect(afterWatch({ code: 410 })).toBe('relist');
    expect(afterWatch(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe('resume-now');
    expect(afterWatch(null)).toBe('resume');
    expect(afterWatch(Object.assign(new Error('Forbidden'), { statusCode: 403 }))).toBe('fail');
  });

  it('reads status codes and continue tokens from either spelling', () => {
    expect(isGone({ code: 410 })).toBe(true);
    expect(isGone({ code: 'ECONNRESET' })).toBe(false);
    expect(continueToken({ metadata: { continue: '' } })).toBeUndefined();
    expect(continueToken({ metadata: { _continue: 'a' } })).toBe('a');
  });
});
