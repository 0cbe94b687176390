// Memory and DOM figures of a page in the console bench: CDP Performance.getMetrics (JS heap, DOM nodes), a forced
// GC (HeapProfiler.collectGarbage) for the retained heap, and the renderer processes' RSS/PSS from /proc (their pids
// from the browser's SystemInfo.getProcessInfo).
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { TestBrowser } from '../test/support/browser.ts';

/** RSS and PSS (MB) of each renderer process of the browser (SystemInfo.getProcessInfo gives their pids). */
export async function rendererMemory(browser: TestBrowser): Promise<{ pid: number; rss_mb: number; pss_mb: number }[]> {
  const cdp = await browser.browser.newBrowserCDPSession();
  try {
    const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
    return info.processInfo
      .filter((p) => p.type === 'renderer')
      .map((p) => {
        const kb = (file: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${p.id}/${file}`, 'utf8'))?.[1] ?? NaN);
        return { pid: p.id, rss_mb: +(kb('status', 'VmRSS') / 1024).toFixed(1), pss_mb: +(kb('smaps_rollup', 'Pss') / 1024).toFixed(1) };
      })
      .sort((a, b) => b.pss_mb - a.pss_mb);
  } finally {
    await cdp.detach();
  }
}

export async function pageMetrics(page: Page): Promise<Record<string, number>> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Performance.enable');
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
  } finally {
    await cdp.detach();
  }
}

export async function collectGarbage(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('HeapProfiler.collectGarbage');
  } finally {
    await cdp.detach();
  }
}

export const mb = (bytes: number | undefined) => +((bytes ?? NaN) / 1024 / 1024).toFixed(1);
