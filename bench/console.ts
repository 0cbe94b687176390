// `npm run bench -- console` (issue 23): the operator console in real Chromium (Debian's, via playwright-core).
//  (a) event -> rendered: events in the driver's own envelopes (eventEnvelope, messageHeaders) published on a
//      real nats-server at 1,000 events/s for one run, read by the console server's NATS feed, sent over SSE and
//      rendered by the page; latency = the page's clock when the `[data-seq]` element entered the DOM (and at the
//      animation frame after it) minus the publish time carried in the event's text. Goal p99 < 250 ms.
//  (b) the runs page with 10,000 synthetic Runs (in-memory rows source, console/server/sources.ts): navigation ->
//      body.dataset.consoleReady, the page's JS heap (CDP Performance.getMetrics) and its renderer's memory (/proc).
// Loopback only. Progress on stderr; the figures are returned for bench/main.ts's JSON.
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { mountConsole } from '../console/server/mount.ts';
import { installReadAuth } from '../console/server/read-auth.ts';
import { natsSources } from '../console/server/nats-sources.ts';
import { ConsoleNats } from '../nats/console-reader.ts';
import { natsSettings } from '../nats/settings.ts';
import type { ConsoleSources } from '../console/server/sources.ts';
import { launchBrowser, screenshot } from '../test/support/browser.ts';
import { collectGarbage, mb, pageMetrics, rendererMemory } from './console-metrics.ts';
import { PROBE_SCRIPT, READ_PROBE } from './console-probe.ts';
import type { ProbeState } from './console-probe.ts';
import { memorySources } from './console-sources.ts';
import type { MemorySources } from './console-sources.ts';
import { benchFeedLatency } from './console-feed.ts';
import type { ConsoleServer } from './console-feed.ts';

const TOKEN = 'fake-bench-console-token';


/** The console as the dispatcher mounts it (mountConsole on a fastify app), on 127.0.0.1. */
export async function startConsoleServer(sources: ConsoleSources): Promise<ConsoleServer> {
  const app: FastifyInstance = Fastify({ logger: false });
  // Loopback only, timing the pages and the feed: no login in the way of what is measured.
  installReadAuth(app, { mode: 'open', readToken: () => '', writeToken: () => TOKEN });
  const mounted = mountConsole(app, { sources, token: () => TOKEN });
  await mounted.started;
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  // The esbuild bundle is made once per server; the first request waits for it. Not the page's time.
  await (await fetch(`${url}/console/app.js`)).text();
  return {
    url,
    close: async () => {
      await app.close();
      await mounted.stop();
    },
  };
}

/** The console's NATS sources as the dispatcher and `tcab console` make them: one connection of its own. */
async function consoleNatsSources(servers: string) {
  const nats = await ConsoleNats.connect(natsSettings(servers));
  return { ...natsSources(nats), close: () => nats.close() };
}

/**
 * A live change on the loaded table: the first row shown turns Failed in the rows source (as a watch would report
 * it); ms from that change to the row's data-phase in the DOM, by the page's clock (includes the server's ~200 ms
 * coalescing of the runs stream).
 */
async function liveUpsert(page: Page, sources: MemorySources): Promise<number> {
  const key = (await page.locator('tr[data-key]').first().getAttribute('data-key'))!;
  const run = [...sources.runs.list()].find((r) => `${r.metadata.namespace}/${r.metadata.name}` === key)!;
  const phase = run.status?.phase === 'Failed' ? 'Succeeded' : 'Failed';
  const seen = page.evaluate(`new Promise((resolve) => {
    const done = () => document.querySelector('tr[data-key="${key}"][data-phase="${phase}"]');
    if (done()) return resolve(performance.timeOrigin + performance.now());
    const observer = new MutationObserver(() => {
      if (done()) { observer.disconnect(); resolve(performance.timeOrigin + performance.now()); }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-phase'] });
  })`) as Promise<number>;
  // The observer is installed once evaluate's script ran; a round trip makes sure before the change.
  await page.evaluate('0');
  const start = performance.timeOrigin + performance.now();
  sources.upsert({ ...run, status: { ...run.status, phase, outcome: phase === 'Failed' ? 'harness_failed' : 'succeeded' } });
  return +((await seen) - start).toFixed(1);
}

/** (b) The runs page with `count` Runs: `navigations` cold loads, each in a browser of its own. */
export async function benchRunsPage(count: number, navigations: number, log: (m: string) => void) {
  const sources = memorySources(count);
  const server = await startConsoleServer(sources);
  const loads: Record<string, unknown>[] = [];
  try {
    for (let i = 0; i < navigations; i++) {
      const browser = await launchBrowser();
      try {
        const { page, errors, httpErrors } = await browser.newPage({ viewport: { width: 1440, height: 900 } });
        await page.addInitScript(PROBE_SCRIPT);
        await page.goto(`${server.url}/runs`);
        await page.waitForFunction("document.body.dataset.consoleReady === 'true'", undefined, { timeout: 120_000 });
        const probe = (await page.evaluate(READ_PROBE)) as ProbeState;
        if (i === 0) await screenshot(page, `runs-page-${count}`);
        const rowsInDom = await page.locator('tr[data-key]').count();
        const total = Number(await page.locator('[data-total]').first().getAttribute('data-total'));
        const upsertMs = await liveUpsert(page, sources);
        const before = await pageMetrics(page);
        await collectGarbage(page);
        const after = await pageMetrics(page);
        const renderers = await rendererMemory(browser);
        const load = {
          first_render_ms: +(probe.readyAt ?? NaN).toFixed(1),
          rows_total: total,
          rows_in_dom: rowsInDom,
          upsert_to_row_ms: upsertMs,
          js_heap_used_mb: mb(before.JSHeapUsedSize),
          js_heap_total_mb: mb(before.JSHeapTotalSize),
          js_heap_used_after_gc_mb: mb(after.JSHeapUsedSize),
          dom_nodes: after.Nodes,
          renderer: renderers[0],
          renderers: renderers.length,
          page_errors: errors,
          http_errors: httpErrors,
        };
        log(`runs page ${i + 1}/${navigations}: ${JSON.stringify(load)}`);
        loads.push(load);
      } finally {
        await browser.close();
      }
    }
  } finally {
    await server.close();
  }
  const median = (key: string) => {
    const values = loads.map((l) => l[key] as number).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)];
  };
  return { runs: count, navigations: loads, first_render_ms_median: median('first_render_ms'), js_heap_used_mb_median: median('js_heap_used_mb') };
}

export async function benchConsole(log: (m: string) => void) {
  const runs = Number(process.env.TCAB_BENCH_CONSOLE_RUNS || 10_000);
  log(`console: runs page with ${runs} Runs (time to first render, JS heap, renderer memory)`);
  const runsPage = await benchRunsPage(runs, 3, log);
  const rate = Number(process.env.TCAB_BENCH_CONSOLE_RATE || 1_000);
  const seconds = Number(process.env.TCAB_BENCH_CONSOLE_SECONDS || 12);
  log(`console: event on NATS -> rendered in the page, ${rate} events/s for ${seconds} s (first 2 s are warm-up)`);
  const feed = await benchFeedLatency({ rate, seconds, warmupSeconds: 2, startConsoleServer, natsSources: consoleNatsSources }, log);
  return { runs_page: runsPage, event_to_render: { ...feed, goal_p99_ms: 250, meets_goal: feed.dom.p99_ms < 250 } };
}
