import { describe, expect, it } from 'vitest';
import type { FeedItem } from '../../shared/console.ts';
import { FEED_VIEWS, FeedBuffer, FeedFilter, viewCount } from './feed.ts';
import { evaluationPath, parseRoute, runPath, seqFromHash } from './routes.ts';

const item = (seq: number): FeedItem => ({ seq, at: '2026-12-05T12:00:00Z', event: { type: 'agent', timestamp: '2026-12-05T12:00:00Z', message: `m${seq}` } });

describe('feed buffer', () => {
  it('keeps each event once, in order, when a resumed batch overlaps what it holds', () => {
    const feed = new FeedBuffer();
    expect(feed.add([item(1), item(2), item(5)])).toBe(3);
    expect(feed.add([item(2), item(5), item(6), item(9)])).toBe(2);
    expect(feed.items.map((i) => i.seq)).toEqual([1, 2, 5, 6, 9]);
    expect(feed.lastSeq).toBe(9);
    expect(feed.indexOf(6)).toBe(3);
    expect(feed.indexOf(3)).toBe(-1);
  });
});

describe('routes', () => {
  it.each([
    ['/', { page: 'runs' }],
    ['/runs', { page: 'runs' }],
    ['/runs/', { page: 'runs' }],
    ['/harnesses', { page: 'harnesses' }],
    ['/runs/team-a/run-1', { page: 'run', namespace: 'team-a', name: 'run-1' }],
    ['/runs/a%20b/x%2Fy', { page: 'run', namespace: 'a b', name: 'x/y' }],
    ['/runs/%E0%A4%A/x', { page: 'not-found' }],
    ['/evaluations', { page: 'evaluations' }],
    ['/evaluations/', { page: 'evaluations' }],
    ['/evaluations/team-a/nightly', { page: 'evaluation', namespace: 'team-a', name: 'nightly' }],
    ['/evaluations/a', { page: 'not-found' }],
    ['/elsewhere', { page: 'not-found' }],
  ])('%s', (path, route) => expect(parseRoute(path)).toEqual(route));

  it('run paths round-trip and event anchors parse', () => {
    expect(parseRoute(runPath('a b', 'x/y'))).toEqual({ page: 'run', namespace: 'a b', name: 'x/y' });
    expect(parseRoute(evaluationPath('a b', 'x/y'))).toEqual({ page: 'evaluation', namespace: 'a b', name: 'x/y' });
    expect(seqFromHash('#seq-42')).toBe(42);
    expect(seqFromHash('#seq-')).toBeUndefined();
    expect(seqFromHash('#other')).toBeUndefined();
  });
});

describe('feed views', () => {
  const typed = (seq: number, type: 'agent' | 'warning' | 'command'): FeedItem => ({
    seq,
    at: '2026-12-05T12:00:00Z',
    event: type === 'command' ? { type, timestamp: '2026-12-05T12:00:00Z', command: 'ls' } : { type, timestamp: '2026-12-05T12:00:00Z', message: 'm' },
  });

  it('a filter keeps the positions of its types, scanning only what was added since its last update', () => {
    const feed = new FeedBuffer();
    const problems = new FeedFilter(FEED_VIEWS.problems.types);
    feed.add([typed(1, 'agent'), typed(2, 'warning'), typed(3, 'command')]);
    expect(problems.update(feed.items)).toEqual([1]);
    feed.add([typed(4, 'warning'), typed(4, 'warning'), typed(5, 'agent')]);
    expect(problems.update(feed.items)).toEqual([1, 3]);
    expect(problems.update(feed.items)).toEqual([1, 3]);
  });

  it('counts per view come from the per-type counts', () => {
    const feed = new FeedBuffer();
    feed.add([typed(1, 'agent'), typed(2, 'warning'), typed(3, 'command'), typed(4, 'command')]);
    expect(viewCount(feed, 'all')).toBe(4);
    expect(viewCount(feed, 'tools')).toBe(2);
    expect(viewCount(feed, 'problems')).toBe(1);
    expect(viewCount(feed, 'subagents')).toBe(0);
  });
});
