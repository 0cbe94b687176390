// The routes' lifecycle without NATS or a cluster: mounted before the sources exist (the dispatcher listens before
// its caches and NATS), a stream waits for them and cancel answers 503; closing the app ends open streams.
import { afterEach, describe, expect, it, vi } from 'vitest';
import Fastify from 'fastify';
import { CONSOLE_PATHS, RUNS_MESSAGES } from '../../shared/console.ts';
import { mountConsole } from './mount.ts';
import { installReadAuth } from './read-auth.ts';
import type { ConsoleSources, RunChange } from './sources.ts';
import { SseClient } from './sse-client.test-support.ts';
import { FEED_RETRY_MS } from './run-stream.ts';

const TOKEN = 'fake-token-for-route-tests';
const READ_TOKEN = 'fake-read-token-for-route-tests';
const READ = { authorization: `Bearer ${READ_TOKEN}` };

/** A bare fastify app with read auth in token mode, as buildApi makes it. */
function appWithReadAuth(readToken: () => string = () => READ_TOKEN) {
  const app = Fastify();
  installReadAuth(app, { mode: 'token', readToken, writeToken: () => TOKEN });
  return app;
}
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
    const app = appWithReadAuth();
    const later = Promise.withResolvers<ConsoleSources>();
    const mounted = mountConsole(app, { sources: later.promise, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, READ);
      const cancel = (auth?: string) => fetch(`${base}${CONSOLE_PATHS.cancel('n', 'r')}`, { method: 'POST', headers: auth ? { authorization: auth } : {} });
      expect((await cancel()).status).toBe(401);
      expect((await cancel(`Bearer ${TOKEN}`)).status).toBe(503);
      expect(client.frames).toEqual([]);
      later.resolve(sources);
      await client.waitFor((f) => f.event === 'snapshot');
      expect(RUNS_MESSAGES.snapshot.parse(client.data('snapshot')[0]).rows.map((r) => r.key)).toEqual(['n/r']);
      expect((await cancel(`Bearer ${TOKEN}`)).status).toBe(200);
      // A Run that does not exist: the run stream says so.
      const run = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('n', 'nope')}`, READ);
      await run.waitFor((f) => f.event === 'gone');
    } finally {
      await mounted.stop();
      await app.close();
    }
  });

  it('closing the app ends the open streams instead of waiting for the browsers to leave', async () => {
    const app = appWithReadAuth();
    const mounted = mountConsole(app, { sources, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, READ);
    await client.waitFor((f) => f.event === 'snapshot');
    await mounted.stop();
    await app.close(); // resolves only once every connection ended
    await expect(client.waitFor(() => false)).rejects.toThrow();
  });
});

describe('run stream feed failure', () => {
  it('says why, asks the browser to wait FEED_RETRY_MS and ends the stream, so the browser resumes from its last id', async () => {
    const app = appWithReadAuth();
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
      const res = await fetch(`${base}${CONSOLE_PATHS.runStream('n', 'r')}`, { headers: { 'last-event-id': '41', ...READ } });
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
    const app = appWithReadAuth();
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
        const client = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('n', name)}`, READ);
        await client.waitFor((f) => f.event === 'notice');
        expect(client.data('notice')[0]).toMatchObject({ text: expect.stringContaining('has no run id') });
      }
      expect(opened).toEqual([]);
      // Last-Event-ID that is not a stream sequence (negative, huge, text): from the first message, never a guess.
      for (const id of ['-5', '99999999999999999999', 'abc']) {
        const res = await fetch(`${base}${CONSOLE_PATHS.runStream('n', 'r')}?after=also-bad`, { headers: { 'last-event-id': id, ...READ } });
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

describe('who may read the console (issue 33)', () => {
  it('every data route answers 401 without a read credential or with a wrong one; the shell, its assets and the session route stay open', async () => {
    const app = appWithReadAuth();
    const feed: ConsoleSources['feed'] = { open: async (_runId, _after, handlers) => (handlers.onCaughtUp(), { stop: async () => undefined }) };
    const mounted = mountConsole(app, { sources: { ...sources, feed }, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const data = [CONSOLE_PATHS.runsStream, CONSOLE_PATHS.harnessesStream, CONSOLE_PATHS.runStream('n', 'r'), CONSOLE_PATHS.atif('n', 'r'), '/api/console/anything-added-later'];
      for (const path of data) {
        for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { authorization: 'Bearer ' }, { authorization: `Basic ${READ_TOKEN}` }, { authorization: READ_TOKEN }, { cookie: `tcab_console_session=${READ_TOKEN}` }]) {
          const res = await fetch(`${base}${path}`, { headers });
          expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
          expect(res.headers.get('www-authenticate')).toBe('Bearer');
          // Nothing of the data: just why.
          expect(await res.json()).toEqual({ error: expect.stringContaining('read credential') });
        }
      }
      // The read token and the write token both read.
      for (const token of [READ_TOKEN, TOKEN]) {
        const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, { authorization: `Bearer ${token}` });
        await client.waitFor((f) => f.event === 'snapshot');
        // Past the credential check: the download finds no Run n/r in these sources (their runDetail has none).
        const atif = await fetch(`${base}${CONSOLE_PATHS.atif('n', 'r')}`, { headers: { authorization: `Bearer ${token}` } });
        expect([atif.status, await atif.json()]).toEqual([404, { error: 'no Run n/r' }]);
      }
      for (const path of ['/', '/runs', '/runs/n/r', '/harnesses', CONSOLE_PATHS.appJs, CONSOLE_PATHS.appCss, CONSOLE_PATHS.session]) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
    } finally {
      await mounted.stop();
      await app.close();
    }
  });

  it('cancel needs the write token: the read token reads but cannot write', async () => {
    const app = appWithReadAuth();
    const cancelled: string[] = [];
    const mounted = mountConsole(app, { sources: { ...sources, writer: { cancel: async (ns, name) => (cancelled.push(`${ns}/${name}`), 'cancelled') } }, token: () => TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      await mounted.started;
      const cancel = (authorization: string) => fetch(`${base}${CONSOLE_PATHS.cancel('n', 'r')}`, { method: 'POST', headers: { authorization } });
      expect((await cancel(`Bearer ${READ_TOKEN}`)).status).toBe(401);
      expect(cancelled).toEqual([]);
      expect((await cancel(`Bearer ${TOKEN}`)).status).toBe(200);
      expect(cancelled).toEqual(['n/r']);
    } finally {
      await mounted.stop();
      await app.close();
    }
  });

  it('an open stream ends once its credential stops holding (the token rotated), and the reconnect is refused', async () => {
    let readToken = READ_TOKEN;
    const app = appWithReadAuth(() => readToken);
    let changed: (change: RunChange) => void = () => undefined;
    const runs: ConsoleSources['runs'] = { list: sources.runs.list, subscribe: (onChange) => ((changed = onChange), () => undefined) };
    const mounted = mountConsole(app, { sources: { ...sources, runs }, token: () => TOKEN, heartbeatMs: 20 });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const kept = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, { authorization: `Bearer ${TOKEN}` });
      const rotated = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, READ);
      await rotated.waitFor((f) => f.event === 'snapshot');
      readToken = 'fake-read-token-after-rotation';
      await expect(rotated.waitFor(() => false)).rejects.toThrow('stream ended');
      await expect(SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, READ)).rejects.toThrow('HTTP 401');
      // The write token did not rotate: its stream still delivers (a change after several heartbeats).
      changed({ type: 'upsert', run: { metadata: { namespace: 'n', name: 'later', uid: 'u2', creationTimestamp: '2026-12-05T04:00:00Z' }, spec: { harness: 'gg', model: 'm' } } });
      await kept.waitFor((f) => f.event === 'upsert' && RUNS_MESSAGES.upsert.parse(f.data).rows.some((r) => r.key === 'n/later'));
      // And the new read token reads.
      const renewed = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, { authorization: `Bearer ${readToken}` });
      await renewed.waitFor((f) => f.event === 'snapshot');
    } finally {
      await mounted.stop();
      await app.close();
    }
  });

  it('refuses to mount on an app without read authentication (every stream would be open)', () => {
    expect(() => mountConsole(Fastify(), { sources, token: () => TOKEN })).toThrow(/read authentication/);
  });
});
