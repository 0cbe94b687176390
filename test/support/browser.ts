// Real Chromium for the console's browser tests and bench: Debian's /usr/bin/chromium (apt, .ci/run installs it)
// driven by playwright-core, which never downloads a browser of its own. Every page records its console errors
// and uncaught exceptions, so a test can assert the app ran clean; screenshots go to test-artifacts/console/
// (gitignored) where the note's reviewer finds them.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const ROOT = join(import.meta.dirname, '..', '..');
export const CHROMIUM = process.env.TCAB_CHROMIUM || '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(ROOT, 'test-artifacts', 'console');

export interface ConsolePage {
  page: Page;
  /** console.error lines and uncaught exceptions of the page, in order. */
  errors: string[];
  /** `<status> <method> <url>` of every response >= 400 the page got (Chromium logs them as console errors too). */
  httpErrors: string[];
}

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (own cookies and storage) with one page whose errors are captured. */
  newPage(options?: { viewport?: { width: number; height: number } }): Promise<ConsolePage>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (as .ci/run does) or set TCAB_CHROMIUM`);
  // Chromium refuses to run as root with its sandbox on; the sandbox stays on for everyone else.
  const asRoot = process.getuid?.() === 0;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...(asRoot ? ['--no-sandbox'] : []), '--disable-dev-shm-usage'],
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({ viewport: options.viewport ?? { width: 1440, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console.error: ${message.text()}`);
      });
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.stack ?? error.message}`));
      const httpErrors: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400) httpErrors.push(`${response.status()} ${response.request().method()} ${response.url()}`);
      });
      return { page, errors, httpErrors };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/** Writes a full-page PNG to test-artifacts/console/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
