// Issue 34 item 5, the workstation half: a login whose refresh token rotates on use (manifest
// `auth.subscription.serialize`) is held by one `tcab run` at a time, and the rotated login is written back.
// The end-to-end part: a stub OAuth token endpoint on 127.0.0.1 that rotates (each refresh token valid once, a
// reused one answers 401 invalid_grant as OpenAI's does) and five driver runs started in parallel against one
// login, with a scripted harness that performs one refresh per run and writes the rotated auth.json as Codex does.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from './run.ts';
import { resolveRunUser } from './run-user.ts';
import type { EventSink, SequencedEvent } from './sinks/sink.ts';
import type { RunResult } from '../shared/run.ts';
import { RunSpec } from '../shared/run.ts';
import { getHarness } from '../harnesses/registry.ts';
import { acquireLoginLock, holdLogin, isStale, readRunHomeFile } from './login-lock.ts';

const ROOT = join(import.meta.dirname, '..');
let base: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-login-lock-'));
  chmodSync(base, 0o755);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A pid that is certainly not running: a child that has exited and been reaped. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('acquireLoginLock', () => {
  it('a second taker waits (told once who holds it) until the first releases; then it holds the lock', async () => {
    const dir = mkdtempSync(join(base, 'lock-'));
    const path = join(dir, 'auth.json.tcab-lock');
    const first = await acquireLoginLock(path);
    let told: unknown;
    let waitedFor: () => void = () => undefined;
    const told$ = new Promise<void>((resolve) => (waitedFor = resolve));
    let secondHeld = false;
    const second = acquireLoginLock(path, {
      onWait: (holder) => {
        told = holder;
        waitedFor();
      },
    }).then((lock) => {
      secondHeld = true;
      return lock;
    });
    await told$;
    expect(told).toMatchObject({ pid: process.pid, host: hostname() });
    expect(secondHeld).toBe(false);
    await first.release();
    const lock = await second;
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
    expect(readdirSync(dir)).toEqual([]); // no lock, no temporary left
  });

  it('a lock whose holder on this host is gone (crash, kill -9) is stale and broken', async () => {
    const dir = mkdtempSync(join(base, 'stale-'));
    const path = join(dir, 'auth.json.tcab-lock');
    const stale = { pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z', nonce: 'dead' };
    expect(isStale(stale)).toBe(true);
    expect(isStale({ ...stale, pid: process.pid })).toBe(false);
    expect(isStale({ ...stale, host: 'another-host' })).toBe(false); // another host's process cannot be checked
    writeFileSync(path, JSON.stringify(stale));
    let waited = false;
    const lock = await acquireLoginLock(path, { onWait: () => (waited = true) });
    expect(waited).toBe(false);
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a waiter gives up when its run is cancelled', async () => {
    const dir = mkdtempSync(join(base, 'cancel-'));
    const path = join(dir, 'auth.json.tcab-lock');
    const first = await acquireLoginLock(path);
    const abort = new AbortController();
    const second = acquireLoginLock(path, { signal: abort.signal, onWait: () => abort.abort() });
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
    await first.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('holdLogin and the write-back', () => {
  const codex = getHarness('codex').manifest;
  const claude = getHarness('claude').manifest;
  const sub = { available: true, mode: 'subscription', files: ['.codex/auth.json'], setting: 'subscription', source: 'test' } as const;

  function login(content: string) {
    const home = mkdtempSync(join(base, 'user-'));
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex/auth.json'), content, { mode: 0o600 });
    const runHome = mkdtempSync(join(base, 'runhome-'));
    mkdirSync(join(runHome, '.codex'));
    return { home, runHome, file: join(home, '.codex/auth.json') };
  }

  it('only a serialised subscription from the user HOME is held (not an API key, not a mounted Secret, not claude)', async () => {
    const { home } = login('{}');
    expect(await holdLogin(claude, { ...sub, files: ['.claude/.credentials.json'] } as never, { kind: 'home', home })).toBeUndefined();
    expect(await holdLogin(codex, sub as never, { kind: 'mounted', dir: home })).toBeUndefined();
    expect(await holdLogin(codex, { available: true, mode: 'api-key', keyVar: 'OPENAI_API_KEY', injectAs: 'CODEX_API_KEY', injectEnv: {}, setting: 'api-key', source: 't' } as never, { kind: 'home', home })).toBeUndefined();
    const held = await holdLogin(codex, sub as never, { kind: 'home', home });
    expect(held?.login).toBe(join(home, '.codex/auth.json'));
    expect(existsSync(join(home, '.codex/auth.json.tcab-lock'))).toBe(true);
    await held!.release();
    expect(existsSync(join(home, '.codex/auth.json.tcab-lock'))).toBe(false);
  });

  it.each([
    { name: 'a rotated, parseable login is written back (mode kept)', left: '{"tokens":{"refresh_token":"r1"}}', written: true },
    { name: 'an unchanged login is left alone', left: '{"tokens":{"refresh_token":"r0"}}', written: false },
    { name: 'a login that does not parse (half-written) is not written back', left: '{"tokens":{"refresh', written: false },
    { name: 'an emptied login is not written back', left: '', written: false },
  ])('$name', async ({ left, written }) => {
    const given = '{"tokens":{"refresh_token":"r0"}}';
    const { home, runHome, file } = login(given);
    const held = (await holdLogin(codex, sub as never, { kind: 'home', home }))!;
    writeFileSync(join(runHome, '.codex/auth.json'), left);
    expect(await held.writeBack(runHome)).toEqual(written ? ['.codex/auth.json'] : []);
    await held.release();
    expect(readFileSync(file, 'utf8')).toBe(written ? left : given);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(home, '.codex'))).toEqual(['auth.json']);
  });

  it('a link the run user planted in the run HOME is never followed', async () => {
    const { home, runHome, file } = login('{"tokens":{"refresh_token":"r0"}}');
    const secret = join(base, 'driver-secret.json');
    writeFileSync(secret, '{"stolen":true}');
    const held = (await holdLogin(codex, sub as never, { kind: 'home', home }))!;
    symlinkSync(secret, join(runHome, '.codex/auth.json'));
    expect(await held.writeBack(runHome)).toEqual([]);
    rmSync(join(runHome, '.codex'), { recursive: true });
    symlinkSync(join(base), join(runHome, '.codex'));
    expect(await readRunHomeFile(runHome, '.codex/auth.json')).toBeUndefined();
    expect(await held.writeBack(runHome)).toEqual([]);
    await held.release();
    expect(readFileSync(file, 'utf8')).toBe('{"tokens":{"refresh_token":"r0"}}');
  });
});

// ---- five parallel runs against a rotating token endpoint ----

interface TokenStub {
  url: string;
  /** Refresh tokens presented, in order, and whether each was accepted. */
  refreshes: { token: string; ok: boolean }[];
  maxConcurrent: number;
  /** The first session waits in /begin until this is called (so the other runs are certainly contending). */
  openGate(): void;
  close(): Promise<void>;
}

/**
 * OpenAI's token endpoint as Codex meets it: POST /oauth/token {grant_type: refresh_token, refresh_token} answers
 * new access, id and refresh tokens and spends the old refresh token; a spent or unknown one answers 401
 * invalid_grant ("refresh token has already been used"). /begin and /end count sessions running at once.
 */
async function startTokenStub(options: { gateFirst: boolean }): Promise<TokenStub> {
  let next = 1;
  const valid = new Set(['r0']);
  const refreshes: TokenStub['refreshes'] = [];
  let running = 0;
  let maxConcurrent = 0;
  let openGate: () => void = () => undefined;
  const gate = options.gateFirst ? new Promise<void>((resolve) => (openGate = resolve)) : Promise.resolve();
  let begun = 0;
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const send = (res: ServerResponse, status: number, data: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(data));
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      if (req.url === '/oauth/token' && req.method === 'POST') {
        const params = req.headers['content-type']?.includes('json') ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text));
        const token = params.refresh_token ?? '';
        const ok = params.grant_type === 'refresh_token' && valid.delete(token);
        refreshes.push({ token, ok });
        if (!ok) return send(res, 401, { error: 'invalid_grant', error_description: 'Your refresh token has already been used to generate a new access token. Please try signing in again.' });
        const n = next++;
        valid.add(`r${n}`);
        return send(res, 200, { access_token: `a${n}`, id_token: `i${n}`, refresh_token: `r${n}`, token_type: 'Bearer', expires_in: 3600 });
      }
      if (req.url === '/begin') {
        running += 1;
        maxConcurrent = Math.max(maxConcurrent, running);
        begun += 1;
        if (begun === 1) await gate;
        return send(res, 200, {});
      }
      if (req.url === '/end') {
        running -= 1;
        return send(res, 200, {});
      }
      send(res, 404, {});
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    refreshes,
    get maxConcurrent() {
      return maxConcurrent;
    },
    openGate: () => openGate(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The harness: Claude-shaped stream-json (the Claude adapter translates it); one rotating refresh per session. */
const ROTATING_CLI = String.raw`#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
if (process.argv[2] === '--version') { console.log('1.2.3 (Rotating)'); process.exit(0); }
const sid = '11111111-2222-3333-4444-555555555555';
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const base = process.env.ROTATING_STUB_URL;
const file = path.join(process.env.HOME, '.rotating', 'auth.json');
(async () => {
  say({ type: 'system', subtype: 'init', cwd: process.cwd(), session_id: sid, model: 'claude-sonnet-4-5' });
  await fetch(base + '/begin', { method: 'POST' });
  const auth = JSON.parse(fs.readFileSync(file, 'utf8'));
  const res = await fetch(base + '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'app_test', grant_type: 'refresh_token', refresh_token: auth.tokens.refresh_token }) });
  const data = await res.json();
  await fetch(base + '/end', { method: 'POST' });
  if (!res.ok) {
    console.error('Your access token could not be refreshed because your refresh token was already used: ' + res.status + ' ' + data.error);
    process.exit(1);
  }
  // As Codex does: the new tokens and last_refresh into auth.json (temp + rename).
  auth.tokens = { ...auth.tokens, access_token: data.access_token, id_token: data.id_token, refresh_token: data.refresh_token };
  auth.last_refresh = new Date().toISOString();
  fs.writeFileSync(file + '.tmp', JSON.stringify(auth, null, 2), { mode: 0o600 });
  fs.renameSync(file + '.tmp', file);
  say({ type: 'assistant', message: { content: [{ type: 'text', text: 'refreshed' }] }, session_id: sid });
  say({ type: 'result', subtype: 'success', is_error: false, result: 'refreshed', session_id: sid, total_cost_usd: 0, usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
})();
`;

function rotatingHarness(stubUrl: string, serialize: boolean): string {
  const root = mkdtempSync(join(base, 'harnesses-'));
  const dir = join(root, 'rotating');
  mkdirSync(dir);
  const cli = join(dir, 'rotating-cli.js');
  writeFileSync(cli, ROTATING_CLI);
  chmodSync(cli, 0o755);
  chmodSync(root, 0o755);
  chmodSync(dir, 0o755);
  writeFileSync(
    join(dir, 'harness.toml'),
    `slug = "rotating"
name = "Rotating login CLI"
strategy = "structured"
binary = "rotating"
docs_url = "https://example.invalid/rotating"
min_supported = "1.0.0"
latest_validated = "1.2.3"
model_ids = "anthropic"
version_command = ["rotating", "--version"]

[install]
command = ["sh", "-c", ${JSON.stringify(`mkdir -p {prefix}/bin && cp ${cli} {prefix}/bin/rotating`)}]

[auth]
modes = ["subscription"]

[auth.subscription]
files = [".rotating/auth.json"]
sign_in = "run rotating login"
${serialize ? 'serialize = "the refresh token is single-use and rotates on every refresh"' : ''}

[env]
ROTATING_STUB_URL = ${JSON.stringify(stubUrl)}
`,
  );
  writeFileSync(join(dir, 'adapter.ts'), `export { default } from ${JSON.stringify(join(ROOT, 'harnesses/claude/adapter.ts'))};\n`);
  return root;
}

class WatchingSink implements EventSink {
  readonly events: SequencedEvent[] = [];
  results: RunResult[] = [];
  private readonly onEvent: (record: SequencedEvent) => void;
  constructor(onEvent: (record: SequencedEvent) => void) {
    this.onEvent = onEvent;
  }
  event(record: SequencedEvent): void {
    this.events.push(record);
    this.onEvent(record);
  }
  result(result: RunResult): void {
    this.results.push(result);
  }
  async close(): Promise<void> {}
}

async function fiveParallelRuns(serialize: boolean) {
  const stub = await startTokenStub({ gateFirst: serialize });
  const harnessesRoot = rotatingHarness(stub.url, serialize);
  const home = mkdtempSync(join(base, 'login-home-'));
  mkdirSync(join(home, '.rotating'));
  const loginFile = join(home, '.rotating/auth.json');
  writeFileSync(loginFile, JSON.stringify({ tokens: { access_token: 'a0', id_token: 'i0', refresh_token: 'r0' }, last_refresh: '2020-01-01T00:00:00Z' }), { mode: 0o600 });
  const env = { TCAB_RUN_ROOT: join(base, `root-${serialize}`), TCAB_AUTH_MODE: 'subscription' };
  const user = resolveRunUser(env, process.getuid!());
  // The first session holds in /begin until another run has said it waits for the login: contention is certain.
  const sinks = [1, 2, 3, 4, 5].map(() => new WatchingSink((r) => r.event.type === 'warning' && r.event.code === 'login_busy' && stub.openGate()));
  try {
    const results = await Promise.all(
      sinks.map((sink, i) =>
        executeRun(RunSpec.parse({ harness: 'rotating', model: 'claude-sonnet-4-5', prompt: `run ${i + 1}` }), {
          runId: `rotating-${serialize ? 'serial' : 'control'}-${i + 1}`,
          env,
          sinks: [sink],
          user,
          credentialSource: { kind: 'home', home },
          harnessesRoot,
        }),
      ),
    );
    const busy = sinks.map((s) => s.events.filter((r) => r.event.type === 'warning' && r.event.code === 'login_busy').length);
    return { results, busy, refreshes: [...stub.refreshes], maxConcurrent: stub.maxConcurrent, login: JSON.parse(readFileSync(loginFile, 'utf8')) as { tokens: { refresh_token: string } }, loginDir: readdirSync(join(home, '.rotating')), sinks };
  } finally {
    await stub.close();
  }
}

describe('five parallel runs on one rotating login (stub OAuth token endpoint)', () => {
  it('serialised (manifest serialize): all five succeed, one at a time, each presenting the token the previous one rotated; the login ends rotated', async () => {
    const { results, busy, refreshes, maxConcurrent, login, loginDir } = await fiveParallelRuns(true);
    expect(results.map((r) => r.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    // One refresh per run, a linear chain r0 -> r1 -> ... -> r5, never a reuse.
    expect(refreshes).toEqual(['r0', 'r1', 'r2', 'r3', 'r4'].map((token) => ({ token, ok: true })));
    expect(maxConcurrent).toBe(1);
    expect(busy.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(login.tokens.refresh_token).toBe('r5');
    expect(loginDir).toEqual(['auth.json']); // lock released, no temporaries left
  });

  it('control, the same harness without serialize: the runs log each other out (one refresh wins, four get invalid_grant)', async () => {
    const { results, refreshes, login, busy } = await fiveParallelRuns(false);
    expect(results.filter((r) => r.outcome === 'succeeded')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'harness_failed')).toHaveLength(4);
    expect(refreshes.filter((r) => r.ok)).toEqual([{ token: 'r0', ok: true }]);
    expect(refreshes.filter((r) => !r.ok)).toEqual(Array.from({ length: 4 }, () => ({ token: 'r0', ok: false })));
    expect(busy).toEqual([0, 0, 0, 0, 0]);
    // Nothing is written back either: the login still holds r0, spent, so the next run would fail too.
    expect(login.tokens.refresh_token).toBe('r0');
  });
});
