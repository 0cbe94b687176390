// The Evaluations pages in real Chromium (test/support/browser.ts) against a console server fed synthetic sources on
// 127.0.0.1: the list, one evaluation's table and plot (a point per cell, placed by the data, linked to its Runs),
// a status change arriving live, a cell's link opening its Runs, and a console without Evaluations. The evaluation
// page's screenshot goes to /tmp/evaluations-page.png, the list's to /tmp/evaluations-list.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../../test/support/browser.ts';
import type { TestBrowser } from '../../test/support/browser.ts';
import { cellKey } from '../../shared/evaluation/slots.ts';
import { cell, evaluation, FakeEvaluationsSource, slotRun, sourcesWith } from '../server/evaluation-fixtures.test-support.ts';
import { mountConsole } from '../server/mount.ts';
import { installReadAuth } from '../server/read-auth.ts';
import type { ConsoleSources } from '../server/sources.ts';

const TOKEN = 'fake-write-token-for-evaluation-pages';
const READ_TOKEN = 'fake-read-token-for-evaluation-pages';
const SCREENSHOT = '/tmp/evaluations-page.png';
const LIST_SCREENSHOT = '/tmp/evaluations-list.png';

const comparison = { fixed: 'model' as const, a: { harness: 'claude', model: 'sonnet' }, b: { harness: 'codex', model: 'sonnet' }, pValue: 0.004 };
const nightlyCells = (claudePassed: number) => [
  cell('claude', 'sonnet', { runs: 10, final: 10, scored: 10, passed: claudePassed, passRate: claudePassed / 10, passRateInterval: { low: claudePassed / 10 - 0.2, high: Math.min(1, claudePassed / 10 + 0.1) }, comparableCostUsd: { sum: 1.2, mean: 0.12 }, passAtK: { k: 2, value: 0.95 }, passHatK: { k: 2, value: 0.8 } }),
  cell('codex', 'sonnet', { runs: 10, final: 10, scored: 9, passed: 3, infrastructureFailed: 1, passRate: 1 / 3, passRateInterval: { low: 0.12, high: 0.65 }, comparableCostUsd: { sum: 0.45, mean: 0.05 }, passAtK: { k: 2, value: 0.5 }, passHatK: { k: 2, value: 0.2 } }),
  cell('gemini', 'pro', { runs: 10, final: 6, scored: 6, passed: 4, passRate: 4 / 6, passRateInterval: { low: 0.3, high: 0.9 }, comparableCostUsd: { sum: 1.5, mean: 0.25 }, passAtK: { k: 2, value: 0.7 }, passHatK: { k: 2, value: 0.6 } }),
];
const nightly = (claudePassed: number) => evaluation('nightly', nightlyCells(claudePassed), { status: { comparisons: [comparison] } });

async function startConsole(sources: ConsoleSources) {
  const app = Fastify();
  installReadAuth(app, { mode: 'token', readToken: () => READ_TOKEN, writeToken: () => TOKEN });
  const mounted = mountConsole(app, { sources, token: () => TOKEN });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  await mounted.started;
  return { url, close: async () => (await mounted.stop(), await app.close()) };
}

/** The dots of the plot, in data order: their centre and the link around each. */
const dots = (page: Page) =>
  page.$$eval('.plot-box g[aria-label="dot"] circle', (circles) => circles.map((c) => ({ cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')), href: c.closest('a')?.getAttribute('href') ?? null })));

describe('Evaluations pages in Chromium', () => {
  let browser: TestBrowser;
  const source = new FakeEvaluationsSource([nightly(9), evaluation('weekly', [cell('claude', 'opus', { final: 2, runs: 10, scored: 2, passed: 1 })])]);
  const runs = [slotRun('nightly', 'claude', 'sonnet', 'case-a', 'succeeded'), slotRun('nightly', 'claude', 'sonnet', 'case-b', 'harness_failed'), slotRun('nightly', 'codex', 'sonnet', 'case-a', 'succeeded'), slotRun('weekly', 'claude', 'opus', 'case-a', 'succeeded')];
  let server: Awaited<ReturnType<typeof startConsole>>;

  beforeAll(async () => {
    browser = await launchBrowser();
    server = await startConsole(sourcesWith(runs, source));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists the evaluations, shows one with its table and plot, follows a status change live, and links a cell to its Runs', async () => {
    const { page, errors } = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${server.url}/evaluations#token=${encodeURIComponent(READ_TOKEN)}`);
    await page.waitForSelector('body[data-console-ready="true"] table.evaluations');
    const list = page.locator('table.evaluations tbody tr');
    expect(await list.count()).toBe(2);
    const listed = page.locator('tr[data-key="evals/nightly"]');
    expect(await listed.locator('.eval-progress').getAttribute('data-final')).toBe('26');
    expect(await listed.locator('.eval-progress').getAttribute('data-total')).toBe('30');
    expect(await listed.locator('td.num').first().textContent()).toBe('16/25');
    expect(await page.locator('tr[data-key="evals/weekly"] td.num').first().textContent()).toBe('1/2');
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Evaluations');
    await page.screenshot({ path: LIST_SCREENSHOT });

    await listed.locator('a').click();
    await page.waitForSelector('.plot-box[data-points="3"] svg');
    expect(new URL(page.url()).pathname).toBe('/evaluations/evals/nightly');

    // The table: a row per cell, its figures, the comparison marked on both cells.
    const cells = page.locator('table.cells tbody tr');
    expect(await cells.count()).toBe(3);
    const claude = page.locator(`tr[data-cell="${cellKey({ harness: 'claude', model: 'sonnet' })}"]`);
    expect(await claude.locator('.pass-rate').textContent()).toBe('90% [70–100]');
    expect(await claude.locator('.mark-higher').textContent()).toBe('▲ more than codex × sonnet');
    expect(await page.locator(`tr[data-cell="${cellKey({ harness: 'codex', model: 'sonnet' })}"] .mark-lower`).textContent()).toBe('▼ less than claude × sonnet');
    expect(await page.locator('table.cells thead').textContent()).toContain('pass@2');
    expect(await page.locator('ul.comparisons li').textContent()).toBe('claude × sonnet passes more than codex × sonnet (same model; Fisher p = 0.0040)');

    // The plot: a point per cell, placed by the data (cost to the right, pass rate up), each linking to its Runs.
    const points = await dots(page);
    expect(points).toHaveLength(3);
    const [c, x, g] = points as [(typeof points)[0], (typeof points)[0], (typeof points)[0]];
    expect(x.cx).toBeLessThan(c.cx); // $0.05 < $0.12
    expect(c.cx).toBeLessThan(g.cx); // $0.12 < $0.25
    expect(c.cy).toBeLessThan(g.cy); // 90% above 67%
    expect(g.cy).toBeLessThan(x.cy); // 67% above 33%
    // Linear in cost from a zero origin: the spacing follows the figures.
    expect((g.cx - c.cx) / (c.cx - x.cx)).toBeCloseTo((0.25 - 0.12) / (0.12 - 0.05), 1);
    // Linear in pass rate between the 0% and 100% lines, which lie inside the drawing.
    const [zero, full] = await page.$$eval('.plot-box g.bounds line', (lines) => lines.map((l) => Number(l.getAttribute('y1'))));
    const height = Number(await page.locator('.plot-box svg').getAttribute('height'));
    expect(0 < full! && full! < zero! && zero! < height).toBe(true);
    [0.9, 1 / 3, 4 / 6].forEach((rate, i) => expect(points[i]!.cy).toBeCloseTo(zero! - rate * (zero! - full!), 0));
    const width = Number(await page.locator('.plot-box svg').getAttribute('width'));
    for (const p of points) expect(p.cx > 0 && p.cx < width).toBe(true);
    expect(points.map((p) => p.href)).toEqual(nightlyCells(9).map((k) => `/runs?evaluation=evals%2Fnightly&cell=${cellKey(k)}`));
    // Each interval is a vertical rule through its point, from the low bound below it to the high bound above it.
    const intervals = await page.$$eval('.plot-box g.interval line', (lines) => lines.map((l) => ['x1', 'x2', 'y1', 'y2'].map((a) => Number(l.getAttribute(a)))));
    expect(intervals).toHaveLength(3);
    intervals.forEach(([x1, x2, y1, y2], i) => {
      expect([x1, x2]).toEqual([points[i]!.cx, points[i]!.cx]);
      expect(Math.max(y1!, y2!)).toBeGreaterThan(points[i]!.cy);
      expect(Math.min(y1!, y2!)).toBeLessThan(points[i]!.cy);
    });
    expect(await page.locator('.plot-box g[aria-label="text"] text').allTextContents()).toEqual(['claude/sonnet', 'codex/sonnet', 'gemini/pro']);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Runs ended: claude passes less now; the table and the point follow without a reload.
    source.set(nightly(6));
    await page.waitForFunction(`document.querySelector('.pass-rate')?.textContent === '60% [40–70]'`);
    await page.waitForFunction(`Number(document.querySelector('.plot-box g[aria-label="dot"] circle')?.getAttribute('cy')) > ${c.cy}`);

    // A cell's link: the runs page, filtered to that evaluation's cell.
    expect(await page.locator('table.cells a.cell-runs').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual(points.map((p) => p.href));
    await claude.locator('a.cell-runs').click();
    await page.waitForSelector('[data-evaluation-filter="evals/nightly"]');
    await page.waitForFunction(`document.querySelectorAll('table.runs tbody tr[data-key]').length === 2`);
    const keys = await page.$$eval('table.runs tbody tr[data-key]', (rows) => rows.map((r) => r.getAttribute('data-key')).sort());
    expect(keys).toEqual(runs.slice(0, 2).map((r) => `evals/${r.metadata.name}`).sort());
    expect(await page.locator('.evaluation-filter').textContent()).toContain('cell claude × sonnet');
    expect(errors).toEqual([]);
  });

  it('says Evaluations are not available where the console reads none', async () => {
    const bare = await startConsole(sourcesWith(runs));
    try {
      const { page, errors } = await browser.newPage();
      await page.goto(`${bare.url}/evaluations#token=${encodeURIComponent(READ_TOKEN)}`);
      await page.waitForSelector('[data-evaluations="unavailable"]');
      expect(await page.locator('[data-evaluations="unavailable"]').textContent()).toContain('not available');
      expect(errors).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
