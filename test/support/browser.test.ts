// The browser helper against Debian's Chromium: it launches without a download, a page's console errors and
// uncaught exceptions are captured, and a screenshot is a PNG file.
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.ts';
import type { TestBrowser } from './browser.ts';

let browser: TestBrowser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => browser?.close());

describe('test browser', () => {
  it('captures console errors and uncaught exceptions and writes a PNG screenshot', async () => {
    const { page, errors } = await browser.newPage({ viewport: { width: 320, height: 200 } });
    await page.setContent('<h1>hi</h1><script>console.error("boom"); setTimeout(() => { throw new Error("late") });</script>');
    await page.locator('h1', { hasText: 'hi' }).waitFor();
    await expect.poll(() => errors.length).toBe(2);
    expect(errors[0]).toBe('console.error: boom');
    expect(errors[1]).toMatch(/^uncaught: .*late/);
    const path = await screenshot(page, 'browser-helper-selftest');
    expect(readFileSync(path).subarray(1, 4).toString()).toBe('PNG');
    rmSync(path);
  });
});
