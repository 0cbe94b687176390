// The operator console (issue 23) in real Chromium (Debian's, via playwright-core) against the test cluster: the
// dispatcher serves it on its API as in the chart (and `tcab console` from a kubeconfig, last), Runs are applied
// with kubectl and run gg through real driver Pods. Every wait is on a condition (a page selector or data-* hook,
// a kubectl watch, the gate's held requests). Screenshots of the runs page (mid-session and at the end), a run page
// mid-session and the harnesses page go to test-artifacts/console/. Reads need the read token (issue 33): each page
// logs in through the console's login page (or a `#token=` login link), and the refusals are tested first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { RunObject } from '../../kube/resources.ts';
import type { HarnessConfigObject } from '../../kube/resources.ts';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { freePort } from '../support/nats-server.ts';
import type { ConsolePage, TestBrowser } from '../support/browser.ts';
import { kubectl, readRunUntil, waitFor, watchAll } from './support.ts';
import { READ_TOKEN, REASONING, TOKEN, startConsoleBench } from './console-support.ts';
import type { ConsoleBench } from './console-support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let bench: ConsoleBench;
let browser: TestBrowser;
const pages: ConsolePage[] = [];

beforeAll(async () => {
  bench = await startConsoleBench();
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  // A page that logged an error or threw failed the app, whatever the assertions saw.
  // The 401 the unauthenticated-write test provokes is logged by Chromium as a failed resource load; nothing else may be.
  // So are the 401s of the login tests (a refused stream, a wrong token), and nothing else.
  const errors = pages.flatMap((p) => p.errors).filter((e) => !/Failed to load resource: the server responded with a status of 401/.test(e));
  await browser?.close();
  await bench?.close();
  expect(errors).toEqual([]);
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${bench.ns}/runs`;
const phaseOf = (runs: RunObject[], name: string) => runs.find((r) => r.metadata?.name === name)?.status?.phase ?? 'Pending';
const HOLDS_SLOT = ['Dispatched', 'Starting', 'Running'];
const FINAL = ['Succeeded', 'Failed', 'Cancelled'];

/**
 * A finished run's whole stream: its last message is the dispatcher's teardown once the driver Pod is deleted, which
 * comes after the driver's result.
 */
const wholeStream = (name: string) =>
  readRunUntil(bench.nats.url, `${bench.ns}_${name}`, (all) => all.some((i) => i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'teardown' && i.event.status === 'completed' && /driver pod .* deleted/.test(i.event.message ?? '')), 60_000);

/** Resolves once `n` commands wait at the gate; fails at once, saying why, when one of `names` ends before. */
async function midSession(n: number, names: string[]): Promise<void> {
  const abort = new AbortController();
  let stop = () => undefined as void;
  const ended = new Promise<never>((_resolve, reject) => {
    void watchAll<RunObject>(runsPath(), {}, (_type, run) => {
      if (names.includes(run.metadata!.name!) && FINAL.includes(run.status?.phase ?? '')) reject(new Error(`${run.metadata!.name} ended before reaching the gate: ${JSON.stringify(run.status)}\n${bench.logs.slice(-40).join('\n')}`));
    }).then((w) => (stop = w.stop), reject);
  });
  try {
    await Promise.race([bench.gate.untilWaiting(n, abort.signal), ended]);
  } finally {
    abort.abort();
    stop();
  }
}

/** Logs in on the login page the console shows a browser without a session. */
async function logIn(page: Page, token: string): Promise<void> {
  await page.locator('#login-token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** A fresh browser context (no cookie) at `path`: the login page first, then the page once logged in. */
async function open(path: string, viewport?: { width: number; height: number }, base = bench.url, token = READ_TOKEN): Promise<Page> {
  const cp = await browser.newPage(viewport ? { viewport } : {});
  pages.push(cp);
  await cp.page.goto(`${base}${path}`);
  await logIn(cp.page, token);
  await cp.page.waitForSelector('body[data-console-ready="true"]');
  return cp.page;
}

/** The status of a stream request made from the page (its cookie, if any, goes with it). */
const streamStatus = (page: Page, path = '/api/console/runs/stream') =>
  page.evaluate(`fetch(${JSON.stringify(path)}).then((r) => { const s = r.status; r.body?.cancel(); return s; })`) as Promise<number>;

/** Types a cap into the harnesses page's form for gg and submits it; the token dialog gets the token once per tab. */
async function setCap(page: Page, cap: number) {
  const row = page.locator('tr[data-slug="gg"]');
  await row.locator('#cap-gg').fill(String(cap));
  await row.getByRole('button', { name: 'Set cap' }).click();
  const dialog = page.locator('#token-input');
  const saved = row.getByRole('status').filter({ hasText: `Saved: ${cap === 0 ? '0 (paused)' : cap}` });
  // The page asks for the token (once per tab) or saves: wait for whichever comes, never guess it from one instant.
  await dialog.or(saved).first().waitFor();
  if (await dialog.isVisible()) {
    await dialog.fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
  }
  await saved.waitFor();
  await page.locator(`tr[data-slug="gg"][data-cap="${cap}"]`).waitFor();
}

const harnessCounts = async (page: Page) => {
  const row = page.locator('tr[data-slug="gg"]');
  return { occupied: await row.getAttribute('data-occupied'), queued: await row.getAttribute('data-queued') };
};

describe('operator console in Chromium against the test cluster', () => {
  it('without a credential: the login page and no data; a wrong token is refused; the read token logs in with an HttpOnly, SameSite=Strict session cookie', async () => {
    const cp = await browser.newPage();
    pages.push(cp);
    const { page } = cp;
    await page.goto(`${bench.url}/runs`);
    await page.locator('#login-token').waitFor();
    expect(await page.locator('body[data-console-ready]').count()).toBe(0);
    expect(await page.locator('[data-stream]').count()).toBe(0); // no page mounted, so no stream opened
    expect(await streamStatus(page)).toBe(401);
    expect(await streamStatus(page, '/harness-config')).toBe(401);
    await screenshot(page, 'login-page');

    await logIn(page, 'not-the-read-token');
    await page.locator('#login-error[role="alert"]').filter({ hasText: 'refused this token' }).waitFor();
    expect(await page.context().cookies()).toEqual([]);

    await logIn(page, READ_TOKEN);
    await page.waitForSelector('body[data-console-ready="true"]');
    await page.locator('[data-stream="live"]').waitFor();
    const [cookie, ...others] = await page.context().cookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ name: 'tcab_console_session', httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    expect(cookie!.value).not.toContain(READ_TOKEN);
    expect(await page.evaluate('document.cookie')).toBe(''); // HttpOnly: the page's scripts never see it
    expect(await streamStatus(page)).toBe(200);
    // The read session does not write: a cancel from the page still needs the write token.
    expect(await page.evaluate(`fetch('/api/console/runs/${bench.ns}/none/cancel', { method: 'POST' }).then((r) => r.status)`)).toBe(401);
  });

  it('a login link (#token=) logs in and leaves no token in the address bar; logging out shows the login and refuses the streams', async () => {
    const cp = await browser.newPage();
    pages.push(cp);
    const { page } = cp;
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${bench.url}/harnesses#token=${encodeURIComponent(READ_TOKEN)}`);
    await page.waitForSelector('body[data-console-ready="true"]');
    expect(page.url()).toBe(`${bench.url}/harnesses`);
    expect(await page.evaluate('location.href')).toBe(`${bench.url}/harnesses`);
    // A fragment never reaches the server: no request carried the token in its URL.
    expect(requested.filter((u) => u.includes(READ_TOKEN))).toEqual([]);
    await page.locator('.session-status').filter({ hasText: 'Logged in (read token)' }).waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#login-token').waitFor();
    expect(await page.locator('[data-stream]').count()).toBe(0);
    expect(await page.context().cookies()).toEqual([]);
    expect(await streamStatus(page)).toBe(401);
  });

  it('a rotated read token ends the open page\'s session: its stream is closed, the login shows (no reconnect loop), the new token logs in', async () => {
    const runs = await open('/runs');
    await runs.locator('[data-stream="live"]').waitFor();
    try {
      bench.rotateReadToken('fake-console-read-token-rotated');
      // The server ends the stream at its next credential check, the browser's reconnect meets a 401, the page asks
      // whether it may still read: no, so the login replaces the page and its stream is gone.
      await runs.locator('#login-token').waitFor({ timeout: 30_000 });
      expect(await runs.locator('[data-stream]').count()).toBe(0);
      await runs.getByText('Your session ended').waitFor();
      await logIn(runs, READ_TOKEN);
      await runs.locator('#login-error').filter({ hasText: 'refused this token' }).waitFor();
      await logIn(runs, 'fake-console-read-token-rotated');
      await runs.locator('[data-stream="live"]').waitFor();
    } finally {
      bench.rotateReadToken(READ_TOKEN);
    }
  });

  it('a Run applied with kubectl appears in the runs table; its page streams the events as the driver emits them; reasoning is collapsed', async () => {
    // Tall enough for the whole feed of a gg run: every event gets its element in the virtualised list.
    const runs = await open('/runs', { width: 1440, height: 1600 });
    await bench.apply('live');
    const key = `${bench.ns}/live`;
    const row = runs.locator(`tr[data-key="${key}"]`);
    await row.waitFor();
    // Mid-session: the driver's one command waits at the gate.
    await midSession(1, ['live']);
    await runs.locator(`tr[data-key="${key}"][data-phase="Running"]`).waitFor();
    // The activity column follows the run's latest event (gg's answer before its command): live from NATS.
    await row.locator('td.c-activity[title="agent"]').waitFor();
    await screenshot(runs, 'runs-page');

    // Keyboard: the focused row opens its run with Enter.
    await row.focus();
    await runs.keyboard.press('Enter');
    await runs.waitForURL(`**/runs/${bench.ns}/live`);
    await runs.locator('[data-caught-up="true"]').waitFor();
    const reasoning = runs.locator('[data-type="reasoning"]');
    await reasoning.waitFor();
    expect(await reasoning.locator('details').getAttribute('open')).toBeNull();
    expect(await reasoning.innerText()).not.toContain(REASONING); // collapsed: the text is not shown
    expect(await runs.locator('[data-type="command"]').count()).toBe(0); // gg reports a command when it ends
    await screenshot(runs, 'run-page-mid-session');

    // The API goes away and comes back (a replica restart): the page resumes its stream after the last event it
    // shows (Last-Event-ID), so what follows arrives once each (checked against the stream below).
    await runs.evaluate(`window.__sameDocument = true; window.__streamStates = [];
      new MutationObserver(() => window.__streamStates.push(document.querySelector('[data-stream]')?.dataset.stream))
        .observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-stream'] });`);
    // Every open page's error count before the restart (an earlier test's page may hold a stream too).
    const before = pages.map((p) => p.errors.length);
    await bench.restartApi();
    await runs.waitForFunction(`window.__streamStates.includes('reconnecting') && document.querySelector('[data-stream]').dataset.stream === 'live'`);
    // Chromium logs each reconnect attempt that found the port closed; those are the restart's, and only those.
    const duringRestart = pages.slice(0, before.length).flatMap((p, i) => p.errors.splice(before[i]!));
    expect(duringRestart.filter((e) => e !== 'console.error: Failed to load resource: net::ERR_CONNECTION_REFUSED')).toEqual([]);
    // Opening the gate ends the command: its event, the answer and the end arrive on the open page, no reload.
    expect(bench.gate.release()).toBe(1);
    await runs.locator('[data-type="command"]').waitFor();
    await runs.locator('article.run-page[data-phase="Succeeded"]').waitFor({ timeout: 120_000 });
    expect(await runs.evaluate('window.__sameDocument')).toBe(true);

    // The page holds exactly the run's events, in the stream's order.
    const items = await wholeStream('live');
    const types = items.flatMap((i) => (i.kind === 'event' ? [i.event.type] : []));
    const feed = runs.locator('[data-caught-up="true"]');
    await runs.locator(`[data-caught-up="true"][data-count="${types.length}"]`).waitFor();
    const shown = await feed.locator('[data-seq]').evaluateAll((els) => els.map((el) => [Number(el.getAttribute('data-seq')), el.getAttribute('data-type')] as const));
    const seqs = shown.map(([seq]) => seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(shown.map(([, type]) => type)).toEqual(types);

    // A deep link to an event opens the run at that event, marked.
    const [commandSeq] = shown.find(([, type]) => type === 'command')!;
    const linked = await open(`/runs/${bench.ns}/live#seq-${commandSeq}`);
    await linked.locator(`#seq-${commandSeq}.highlighted[data-type="command"]`).waitFor();
    expect(await linked.locator(`#seq-${commandSeq}`).isVisible()).toBe(true);
  }, 300_000);

  it('a cap change from the harnesses page is enforced at the next claim', async () => {
    const harnesses = await open('/harnesses');
    await setCap(harnesses, 0);
    await bench.apply('cap-a', 'cap-b');
    await harnesses.locator('tr[data-slug="gg"][data-queued="2"]').waitFor();
    // Paused: both queued. Cap 1: the next claim takes exactly one of them.
    await setCap(harnesses, 1);
    const afterOne = await waitFor<RunObject>(runsPath(), (all) => ['cap-a', 'cap-b'].some((n) => HOLDS_SLOT.includes(phaseOf(all, n))), 120_000);
    const claimed = HOLDS_SLOT.includes(phaseOf(afterOne, 'cap-a')) ? 'cap-a' : 'cap-b';
    const other = claimed === 'cap-a' ? 'cap-b' : 'cap-a';
    expect(phaseOf(afterOne, other)).toBe('Pending');
    await midSession(1, [claimed]);
    const now = await waitFor<RunObject>(runsPath(), (all) => phaseOf(all, claimed) === 'Running', 60_000);
    expect(phaseOf(now, other)).toBe('Pending');
    await harnesses.locator('tr[data-slug="gg"][data-occupied="1"][data-cap="1"]').waitFor();
    expect(await harnessCounts(harnesses)).toMatchObject({ queued: '1' });
    await screenshot(harnesses, 'harnesses-page');

    // Cap 2: the queued one is claimed too.
    await setCap(harnesses, 2);
    await midSession(2, ['cap-a', 'cap-b']);
    await waitFor<RunObject>(runsPath(), (all) => phaseOf(all, other) === 'Running', 120_000);
  }, 300_000);

  it('an unauthenticated write is refused with 401 and changes nothing', async () => {
    for (const authorization of [undefined, 'Bearer not-the-token']) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) };
      expect((await fetch(`${bench.url}/api/console/runs/${bench.ns}/cap-b/cancel`, { method: 'POST', headers, body: '{}' })).status).toBe(401);
      expect((await fetch(`${bench.url}/harness-config/gg`, { method: 'POST', headers, body: '{"maxParallelism":0}' })).status).toBe(401);
    }
    // The page with a wrong token: the cancel is refused and says so.
    const run = await open(`/runs/${bench.ns}/cap-b`);
    await run.getByRole('button', { name: 'Cancel run' }).click();
    await run.getByRole('button', { name: 'Yes, cancel the run' }).click();
    await run.locator('#token-input').fill('not-the-token');
    await run.getByRole('button', { name: 'Use token' }).click();
    await run.locator('[role="alert"][data-status="401"]').waitFor();
    const [gg] = await waitFor<HarnessConfigObject>('/apis/tcab.dev/v1alpha1/harnessconfigs', (all) => all.some((c) => c.metadata?.name === 'gg'), 30_000);
    expect(gg!.spec.maxParallelism).toBe(2);
    const runs = await waitFor<RunObject>(runsPath(), () => true, 30_000);
    for (const name of ['cap-a', 'cap-b']) expect(runs.find((r) => r.metadata?.name === name)?.spec.cancel, name).toBeFalsy();
    expect(phaseOf(runs, 'cap-b')).toBe('Running');
  }, 120_000);

  it('a cancel from the page ends the Run Cancelled', async () => {
    const run = await open(`/runs/${bench.ns}/cap-b`);
    await run.getByRole('button', { name: 'Cancel run' }).click();
    await run.getByRole('button', { name: 'Yes, cancel the run' }).click();
    await run.locator('#token-input').fill(TOKEN);
    await run.getByRole('button', { name: 'Use token' }).click();
    // The page's own confirmation lasts until the Run is final (then the button and it go): the Run's phase is the proof.
    const done = await waitFor<RunObject>(runsPath(), (all) => phaseOf(all, 'cap-b') === 'Cancelled', 120_000);
    expect(done.find((r) => r.metadata?.name === 'cap-b')!.status).toMatchObject({ phase: 'Cancelled', outcome: 'cancelled' });
    await run.locator('article.run-page[data-phase="Cancelled"]').waitFor();
    expect(await run.locator('[role="alert"]').count()).toBe(0);
    // The other run was not touched: the gate lets it finish.
    await bench.gate.untilWaiting(1);
    bench.gate.release();
    await waitFor<RunObject>(runsPath(), (all) => phaseOf(all, 'cap-a') === 'Succeeded', 120_000);

    // The runs table at the end: the three Runs as they ended, each row live-updated to its final phase.
    const runs = await open('/runs');
    for (const [name, phase] of [['live', 'Succeeded'], ['cap-a', 'Succeeded'], ['cap-b', 'Cancelled']]) await runs.locator(`tr[data-key="${bench.ns}/${name}"][data-phase="${phase}"]`).waitFor();
    await screenshot(runs, 'runs-page-ended');
  }, 300_000);

  it('the egress profile: a badge in the runs table, the profile and its hosts in the run page\'s status', async () => {
    // As the dispatcher writes it (status.egress), on a Run already final (the dispatcher writes its status no more).
    const patched = await kubectl(['patch', 'run', 'live', '-n', bench.ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { egress: { profile: 'registries', hosts: ['registry.npmjs.org', 'pypi.org'] } } })]);
    expect(patched.code, patched.stderr).toBe(0);
    const runs = await open('/runs');
    const badge = runs.locator(`tr[data-key="${bench.ns}/live"] .badge.egress[data-egress="registries"]`);
    await badge.waitFor();
    expect(await badge.getAttribute('title')).toBe('egress profile: registries');
    // Inside its cell, not cut off by the name's ellipsis (the cell hides what overflows it).
    const [cell, shown] = [await runs.locator(`tr[data-key="${bench.ns}/live"] th.c-name`).boundingBox(), await badge.boundingBox()];
    expect(shown!.x + shown!.width).toBeLessThanOrEqual(cell!.x + cell!.width);
    await screenshot(runs, 'runs-page-egress');
    const run = await open(`/runs/${bench.ns}/live`);
    await run.locator('#status-title').waitFor();
    await run.locator('.kv div').filter({ hasText: 'Egress' }).filter({ hasText: 'registries: registry.npmjs.org, pypi.org' }).waitFor();
  });

  it('`tcab console` on a workstation (kubeconfig + NATS URL) serves the same pages behind the login URL it prints: the Runs as they ended, a run\'s whole feed, the cap', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), 'console', '--port', String(port), '--kubeconfig', inject('kubeconfig'), '--namespace', bench.ns, '--nats', bench.nats.url], {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = once(child, 'exit');
    const firstPage = pages.length;
    try {
      const stderr = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('tcab console: log in: ')) resolve(text);
        });
        child.once('exit', (code) => reject(new Error(`tcab console exited with ${code}: ${text}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      const loginUrl = /tcab console: log in: (\S+)\n/.exec(stderr)![1]!;
      expect(loginUrl).toMatch(new RegExp(`^${base}/#token=[A-Za-z0-9_-]{32}$`));
      // Without the token: the login page.
      const refused = await browser.newPage();
      pages.push(refused);
      await refused.page.goto(`${base}/runs`);
      await refused.page.locator('#login-token').waitFor();
      // The printed URL: logged in, the token gone from the address bar; the write token it carries also writes.
      const cp = await browser.newPage();
      pages.push(cp);
      await cp.page.goto(loginUrl);
      await cp.page.waitForSelector('body[data-console-ready="true"]');
      expect(cp.page.url()).toBe(`${base}/runs`); // `/` shows the runs, which names itself in the address bar
      await cp.page.locator('.session-status').filter({ hasText: 'Logged in (write token)' }).waitFor();
      const runs = cp.page;
      for (const [name, phase] of [['live', 'Succeeded'], ['cap-a', 'Succeeded'], ['cap-b', 'Cancelled']]) await runs.locator(`tr[data-key="${bench.ns}/${name}"][data-phase="${phase}"]`).waitFor();
      const items = await wholeStream('live');
      const token = decodeURIComponent(loginUrl.slice(loginUrl.indexOf('#token=') + '#token='.length));
      const run = await open(`/runs/${bench.ns}/live`, { width: 1440, height: 1600 }, base, token);
      await run.locator(`[data-caught-up="true"][data-count="${items.filter((i) => i.kind === 'event').length}"]`).waitFor();
      // In the tab the login URL opened, a cap change saves without asking for a token.
      await runs.getByRole('link', { name: 'Harnesses' }).click();
      await runs.locator('tr[data-slug="gg"][data-cap="2"]').waitFor();
      await setCap(runs, 2);
      expect(await runs.locator('#token-input').isVisible()).toBe(false);
    } finally {
      // Its pages go first: an open page's stream would try to reconnect to the stopped console and log that.
      for (const cp of pages.slice(firstPage)) await cp.page.context().close();
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
