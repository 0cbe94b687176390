// The evaluations stream (issue 39) on a console fed a synthetic Evaluations source: the snapshot, a status change
// as Runs end (an upsert), a deletion (a remove), the read credential it needs like every stream, a console without
// Evaluations, and the code-split chunk the evaluation page loads its plot library from.
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { CONSOLE_PATHS, EVALUATIONS_MESSAGES } from '../../shared/console.ts';
import { cellKey } from '../../shared/evaluation/slots.ts';
import { cell, evaluation, FakeEvaluationsSource, sourcesWith } from './evaluation-fixtures.test-support.ts';
import { mountConsole } from './mount.ts';
import { installReadAuth } from './read-auth.ts';
import type { ConsoleSources } from './sources.ts';
import { SseClient } from './sse-client.test-support.ts';

const TOKEN = 'fake-write-token-for-evaluation-tests';
const READ_TOKEN = 'fake-read-token-for-evaluation-tests';
const READ = { authorization: `Bearer ${READ_TOKEN}` };

async function consoleWith(sources: ConsoleSources) {
  const app = Fastify();
  installReadAuth(app, { mode: 'token', readToken: () => READ_TOKEN, writeToken: () => TOKEN });
  const mounted = mountConsole(app, { sources, token: () => TOKEN });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  await mounted.started;
  return {
    base,
    close: async () => {
      await mounted.stop();
      await app.close();
    },
  };
}

afterEach(() => SseClient.closeAll());

describe('evaluations stream', () => {
  it('sends every Evaluation, then its status as it changes, then its removal', async () => {
    const running = evaluation('nightly', [cell('claude', 'sonnet', { final: 4, scored: 4, passed: 2 }), cell('codex', 'gpt-5', { final: 3, scored: 3, passed: 1 })]);
    const source = new FakeEvaluationsSource([running, evaluation('weekly', [cell('claude', 'opus')])]);
    const server = await consoleWith(sourcesWith([], source));
    try {
      const client = await SseClient.open(`${server.base}${CONSOLE_PATHS.evaluationsStream}`, READ);
      await client.waitFor((f) => f.event === 'snapshot');
      const snapshot = EVALUATIONS_MESSAGES.snapshot.parse(client.data('snapshot')[0]);
      expect(snapshot.available).toBe(true);
      expect(snapshot.rows.map((r) => r.key).sort()).toEqual(['evals/nightly', 'evals/weekly']);
      const nightly = snapshot.rows.find((r) => r.key === 'evals/nightly')!;
      expect(nightly.runs).toMatchObject({ total: 20, final: 7 });
      expect(nightly.cells.map((c) => [c.harness, c.model, c.key, c.final])).toEqual([
        ['claude', 'sonnet', cellKey({ harness: 'claude', model: 'sonnet' }), 4],
        ['codex', 'gpt-5', cellKey({ harness: 'codex', model: 'gpt-5' }), 3],
      ]);

      // Runs ended: the controller wrote a new status.
      source.set(evaluation('nightly', [cell('claude', 'sonnet', { final: 10, scored: 10, passed: 9, passRate: 0.9 }), cell('codex', 'gpt-5')]));
      await client.waitFor((f) => f.event === 'upsert');
      const [upsert] = EVALUATIONS_MESSAGES.upsert.parse(client.data('upsert')[0]).rows;
      expect(upsert).toMatchObject({ key: 'evals/nightly', phase: 'Completed', runs: { total: 20, final: 20 } });
      expect(upsert!.cells[0]).toMatchObject({ final: 10, passed: 9, passRate: 0.9 });

      // The same status again (a write that changed nothing shown) is not sent; a deletion is.
      source.set(evaluation('nightly', [cell('claude', 'sonnet', { final: 10, scored: 10, passed: 9, passRate: 0.9 }), cell('codex', 'gpt-5')]));
      source.remove(evaluation('weekly', []));
      await client.waitFor((f) => f.event === 'remove');
      expect(client.data('remove')).toEqual([{ keys: ['evals/weekly'] }]);
      expect(client.data('upsert')).toHaveLength(1);

      // A client opening now gets the state as it is.
      const later = await SseClient.open(`${server.base}${CONSOLE_PATHS.evaluationsStream}`, READ);
      await later.waitFor((f) => f.event === 'snapshot');
      expect(EVALUATIONS_MESSAGES.snapshot.parse(later.data('snapshot')[0]).rows.map((r) => [r.key, r.runs?.final])).toEqual([['evals/nightly', 20]]);
    } finally {
      await server.close();
    }
  });

  it('needs a read credential like every stream', async () => {
    const server = await consoleWith(sourcesWith([], new FakeEvaluationsSource([evaluation('nightly', [cell('claude', 'sonnet')])])));
    try {
      for (const headers of [{}, { authorization: 'Bearer not-the-token' }]) {
        const res = await fetch(`${server.base}${CONSOLE_PATHS.evaluationsStream}`, { headers });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: expect.stringContaining('read credential') });
      }
      for (const path of ['/evaluations', '/evaluations/evals/nightly']) expect((await fetch(`${server.base}${path}`)).status, path).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('without an Evaluations source the snapshot says they are not available', async () => {
    const server = await consoleWith(sourcesWith([]));
    try {
      const client = await SseClient.open(`${server.base}${CONSOLE_PATHS.evaluationsStream}`, READ);
      await client.waitFor((f) => f.event === 'snapshot');
      expect(EVALUATIONS_MESSAGES.snapshot.parse(client.data('snapshot')[0])).toMatchObject({ available: false, rows: [] });
    } finally {
      await server.close();
    }
  });

  it('serves the plot chunk app.js imports (public, content-hashed), and 404 for any other name', async () => {
    const server = await consoleWith(sourcesWith([]));
    try {
      const js = await (await fetch(`${server.base}${CONSOLE_PATHS.appJs}`)).text();
      const chunk = /import\("\.\/chunks\/(plot-chart-[A-Z0-9]+\.js)"\)/.exec(js)?.[1];
      expect(chunk).toMatch(/^plot-chart-[A-Z0-9]+\.js$/);
      const res = await fetch(`${server.base}${CONSOLE_PATHS.chunks}${chunk}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/javascript');
      expect(res.headers.get('cache-control')).toContain('immutable');
      expect(await res.text()).toContain('aria-label');
      expect((await fetch(`${server.base}${CONSOLE_PATHS.chunks}nope.js`)).status).toBe(404);
      // Hostile names: inherited properties of a plain object, a path out of chunks/, encoded or not.
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '..%2Fapp.js', '%2e%2e%2fapp.js', `..%2F${chunk}`, `${chunk}%00`]) {
        const hostile = await fetch(`${server.base}${CONSOLE_PATHS.chunks}${name}`);
        expect(hostile.status, name).toBe(404);
        expect(await hostile.json(), name).toEqual({ error: 'no such asset' });
      }
    } finally {
      await server.close();
    }
  });
});
