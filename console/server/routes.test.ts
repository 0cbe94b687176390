// The routes' lifecycle without NATS or a cluster: mounted before the sources exist (the dispatcher listens before
// its caches and NATS), a stream waits for them and cancel answers 503; closing the app ends open streams.
import { afterEach, describe, expect, it, vi } from 'vitest';
import Fastify from 'fastify';
import { CONSOLE_PATHS, RUNS_MESSAGES } from '../../shared/console.ts';
import { mountConsole } from './mount.ts';
import type { ConsoleSources } from './sources.ts';
import { SseClient } from './sse-client.test-support.ts';
import { FEED_RETRY_MS } from './run-stream.ts';

const TOKEN = 'fake-token-for-route-tests';
const sources: ConsoleSources = {
  runs: { list: () => [{ metadata: { namespace: 'n', name: 'r', uid: 'u', creationTimestamp: '2026-12-05T04:00:00Z' }, spec: { harness: 'gg', model: 'm' } }], subscribe: () => () => undefined },
  runDetail: { watch: (_ns, _name, cb) => (cb(undefined), () => undefined) },
  kubeEvents: { watch: () => () => undefined },
  writer: { cancel: async () => 'cancelled' },
  harnesses: { list: () => [], readiness: () => ({ ready: true, missing: [] }) },
  configs: { list: () => new Map(), subscribe: () => () => undefined },
};

afterEach(() => SseClient.closeAll());

describe('console routes', () => {
  it('before the sources exist: a stream waits and then gets its snapshot, cancel is 503 (after the token check)', async () => {
    const app = Fastify();
    const later = Promise.withResolvers<ConsoleSources>();
    const mounted = mountConsole(app, { sources: later.promise, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`);
      const cancel = (auth?: string) => fetch(`${base}${CONSOLE_PATHS.cancel('n', 'r')}`, { method: 'POST', headers: auth ? { authorization: auth } : {} });
      expect((await cancel()).status).toBe(401);
      expect((await cancel(`Bearer ${TOKEN}`)).status).toBe(503);
      expect(client.frames).toEqual([]);
      later.resolve(sources);
      await client.waitFor((f) => f.event === 'snapshot');
      expect(RUNS_MESSAGES.snapshot.parse(client.data('snapshot')[0]).rows.map((r) => r.key)).toEqual(['n/r']);
      expect((await cancel(`Bearer ${TOKEN}`)).status).toBe(200);
      // A Run that does not exist: the run stream says so.
      const run = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('n', 'nope')}`);
      await run.waitFor((f) => f.event === 'gone');
    } finally {
      await mounted.stop();
      await app.close();
    }
  });

  it('closing the app ends the open streams instead of waiting for the browsers to leave', async () => {
    const app = Fastify();
    const mounted = mountConsole(app, { sources, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`);
    await client.waitFor((f) => f.event === 'snapshot');
    await mounted.stop();
    await app.close(); // resolves only once every connection ended
    await expect(client.waitFor(() => false)).rejects.toThrow();
  });
});

describe('run stream feed failure', () => {
  it('says why, asks the browser to wait FEED_RETRY_MS and ends the stream, so the browser resumes from its last id', async () => {
    const app = Fastify();
    const opened: number[] = [];
    const feed: ConsoleSources['feed'] = {
      open: async (_runId, after, handlers) => {
        opened.push(after);
        handlers.onEvents([{ runId: 'n_r', seq: after + 1, runSeq: 1, at: '2026-12-05T04:00:00.000Z', event: { type: 'agent', timestamp: '2026-12-05T04:00:00.000Z', message: 'm' } }]);
        setImmediate(() => handlers.onError(new Error('consumer deleted')));
        return { stop: async () => undefined };
      },
    };
    const mounted = mountConsole(app, { sources: { ...sources, feed }, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${base}${CONSOLE_PATHS.runStream('n', 'r')}`, { headers: { 'last-event-id': '41' } });
      const text = await res.text(); // ends: the server closed the stream
      expect(opened).toEqual([41]);
      expect(text).toContain('id: 42\n');
      expect(text).toContain('event: notice\ndata: {"text":"NATS: consumer deleted"}');
      expect(text).toContain(`retry: ${FEED_RETRY_MS}\n`);
      expect(text.indexOf('id: 42')).toBeLessThan(text.indexOf('event: notice'));
    } finally {
      await mounted.stop();
      await app.close();
    }
  });
});

describe('hostile run stream requests', () => {
  it('a name that would widen the NATS filter (>, *, a space, a subject token) opens no feed, and a bad resume point reads from the start', async () => {
    const app = Fastify();
    const opened: { runId: string; after: number }[] = [];
    const feed: ConsoleSources['feed'] = {
      open: async (runId, after) => {
        opened.push({ runId, after });
        return { stop: async () => undefined };
      },
    };
    const mounted = mountConsole(app, { sources: { ...sources, feed }, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      for (const name of ['>', '*', 'a b', 'x.>']) {
        const client = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('n', name)}`);
        await client.waitFor((f) => f.event === 'notice');
        expect(client.data('notice')[0]).toMatchObject({ text: expect.stringContaining('has no run id') });
      }
      expect(opened).toEqual([]);
      // Last-Event-ID that is not a stream sequence (negative, huge, text): from the first message, never a guess.
      for (const id of ['-5', '99999999999999999999', 'abc']) {
        const res = await fetch(`${base}${CONSOLE_PATHS.runStream('n', 'r')}?after=also-bad`, { headers: { 'last-event-id': id } });
        await res.body?.cancel();
      }
      await vi.waitFor(() => expect(opened).toHaveLength(3));
      expect(opened.map((o) => o.after)).toEqual([0, 0, 0]);
      expect(new Set(opened.map((o) => o.runId))).toEqual(new Set(['n_r']));
    } finally {
      await mounted.stop();
      await app.close();
    }
  });
});
