// The console's HTTP routes, registered onto a given fastify app (the dispatcher's API, or `tcab console`'s):
// the SPA and its assets (public: no data in them, so the login page loads), three SSE streams (runs, one run,
// harnesses) and the ATIF download, which need a read credential (read-auth.ts, installed on the app before), and
// the one write, cancel (the write token).
// The state may come later than the routes (the dispatcher listens before its caches and NATS exist): a stream
// opened before then waits for it; cancel answers 503 until then.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { bearerOf, tokenMatches } from '../../shared/bearer-token.ts';
import { CONSOLE_PATHS, runKey } from '../../shared/console.ts';
import type { CancelResponse } from '../../shared/console.ts';
import { loadBundle } from './assets.ts';
import { registerAtifRoute } from './atif-route.ts';
import { PUBLIC_ROUTE, hasReadAuth } from './read-auth.ts';
import { streamRun } from './run-stream.ts';
import { SseStream } from './sse.ts';
import type { ConsoleState } from './state.ts';

export const DEFAULT_STALLED_AFTER_SECONDS = 300;
/** Paths that serve the single-page app (the app picks the page from location.pathname). */
export const PAGE_PATHS = ['/', '/runs', '/runs/:namespace/:name', '/harnesses', '/evaluations', '/evaluations/:namespace/:name'] as const;

export interface ConsoleOptions {
  /** The started state (its sources inside), or a promise of it. */
  state: ConsoleState | Promise<ConsoleState>;
  /** The API's bearer token, asked per request (the Secret's file may be rotated). */
  token: () => string;
  stalledAfterSeconds?: number;
  /** The streams' keep-alive and credential re-check period (sse.ts HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  // Without it every stream would be open to anyone who reaches the port: refuse to serve rather than leak.
  if (!hasReadAuth(app)) throw new Error('the console needs read authentication on its app: call installReadAuth first');
  const ready = Promise.resolve(options.state);
  let current: ConsoleState | undefined;
  void ready.then((s) => (current = s));
  const stalledAfterSeconds = options.stalledAfterSeconds ?? DEFAULT_STALLED_AFTER_SECONDS;
  const bundle = loadBundle();
  // Streams never end on their own: closing the app ends them, or its close would wait for every browser to leave.
  const open = new Set<SseStream>();
  const sse = (req: FastifyRequest, reply: FastifyReply, start: (stream: SseStream, state: ConsoleState) => void) => {
    reply.hijack();
    const stream = new SseStream(reply.raw, { heartbeatMs: options.heartbeatMs, stillAllowed: req.readAccess?.holds });
    open.add(stream);
    void stream.closed.then(() => open.delete(stream));
    void ready.then((state) => {
      if (!stream.isClosed) start(stream, state);
    });
  };
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });

  for (const path of PAGE_PATHS) {
    app.get(path, PUBLIC_ROUTE, async (_req, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send((await bundle).html));
  }
  // The html names them with a content hash (?v=...): a cached copy is never a stale one.
  app.get(CONSOLE_PATHS.appJs, PUBLIC_ROUTE, async (_req, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=31536000, immutable').send((await bundle).js));
  // Code the app loads on demand (the evaluation page's plot library), named by content hash too.
  app.get<{ Params: { file: string } }>(`${CONSOLE_PATHS.chunks}:file`, PUBLIC_ROUTE, async (req, reply) => {
    // Own names only: `__proto__`, `constructor` or `toString` must not reach Object.prototype.
    const { chunks } = await bundle;
    const chunk = Object.hasOwn(chunks, req.params.file) ? chunks[req.params.file] : undefined;
    if (chunk === undefined) return reply.code(404).send({ error: 'no such asset' });
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=31536000, immutable').send(chunk);
  });
  app.get(CONSOLE_PATHS.appCss, PUBLIC_ROUTE, async (_req, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=31536000, immutable').send((await bundle).css));

  app.get(CONSOLE_PATHS.runsStream, (req, reply) => {
    sse(req, reply, (stream, state) => {
      // Listen first, then snapshot: a change in between is sent twice (idempotent upsert), never lost.
      const off = state.onRows({
        onRows: (rows, keys) => {
          if (rows.length) stream.send('upsert', { rows });
          if (keys.length) stream.send('remove', { keys });
        },
      });
      stream.send('snapshot', { serverTime: new Date().toISOString(), stalledAfterSeconds, rows: state.runRows() });
      if (state.natsProblem) stream.send('notice', { text: `NATS: ${state.natsProblem}` });
      void stream.closed.then(off);
    });
  });

  app.get(CONSOLE_PATHS.harnessesStream, (req, reply) => {
    sse(req, reply, (stream, state) => {
      const off = state.onHarnesses({ onHarnesses: (rows) => stream.send('upsert', { rows }) });
      stream.send('snapshot', { serverTime: new Date().toISOString(), rows: state.harnessRows() });
      void stream.closed.then(off);
    });
  });

  // Read auth as every stream: the app's onRequest hook (read-auth.ts) refuses it without a read credential.
  app.get(CONSOLE_PATHS.evaluationsStream, (req, reply) => {
    sse(req, reply, (stream, state) => {
      const off = state.evaluations.listen({
        onEvaluations: (rows, keys) => {
          if (rows.length) stream.send('upsert', { rows });
          if (keys.length) stream.send('remove', { keys });
        },
      });
      stream.send('snapshot', { serverTime: new Date().toISOString(), available: state.evaluations.available, rows: state.evaluations.list() });
      void stream.closed.then(off);
    });
  });

  app.get<{ Params: { namespace: string; name: string }; Querystring: { after?: string } }>('/api/console/runs/:namespace/:name/stream', (req, reply) => {
    sse(req, reply, (stream, state) => streamRun(stream, req.params, req.query, req.headers['last-event-id'], { state, sources: state.sources, stalledAfterSeconds, log: req.log }));
  });

  registerAtifRoute(app, ready);

  app.post<{ Params: { namespace: string; name: string } }>('/api/console/runs/:namespace/:name/cancel', async (req, reply) => {
    if (!tokenMatches(bearerOf(req.headers.authorization), options.token())) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'a valid bearer token is required' });
    if (!current) return reply.code(503).header('retry-after', '1').send({ error: 'the console is starting' });
    const { namespace, name } = req.params;
    const done = await current.sources.writer.cancel(namespace, name);
    if (done === 'not-found') return reply.code(404).send({ error: `no Run ${namespace}/${name}` });
    const body: z.infer<typeof CancelResponse> = { key: runKey(namespace, name), cancel: true };
    return body;
  });
}
