// executeRun end to end with real processes and a scripted harness CLI (see test/support/scripted-harness.ts).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REFUSING_PORT } from '../test/support/nats-server.ts';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { processRunning } from './leftovers.ts';
import { executeRun } from './run.ts';
import type { DriverOptions } from './run.ts';
import { MemorySink } from './sinks/sink.ts';
import { resolveRunUser } from './run-user.ts';
import { RunSpec } from '../shared/run.ts';
import type { RunSpecInput } from '../shared/run.ts';
import { HarnessEvent } from '../shared/events.ts';
import { RunResult } from '../shared/run.ts';
import { SECRET_MARKER } from './scrub.ts';
import { toAtif } from '../export/atif/convert.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { createScriptedHarness } from '../test/support/scripted-harness.ts';
import { startScriptedRegistry } from '../test/support/scripted-registry.ts';
import { pollUntil } from '../test/support/poll.ts';
import type { Timers } from './stages/stderr-flush.ts';
import type { ScriptedHarness } from '../test/support/scripted-harness.ts';

const CANARY = 'sk-ant-fake-canary-0123456789abcdef';
let base: string;
let harness: ScriptedHarness;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-driver-test-'));
  harness = createScriptedHarness();
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  harness.dispose();
});

async function run(spec: Partial<RunSpecInput>, { env: extraEnv, ...options }: Partial<DriverOptions> & { env?: Record<string, string> } = {}) {
  const sink = new MemorySink();
  const runId = `t-${Math.random().toString(36).slice(2, 10)}`;
  const env = { TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: CANARY, ...extraEnv };
  const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'plain', ...spec }), {
    runId,
    env,
    sinks: [sink],
    user: resolveRunUser(env, process.getuid!()),
    credentialSource: { kind: 'home', home: join(base, 'no-home') },
    harnessesRoot: harness.root,
    ...options,
  });
  const events = sink.events.map((e) => e.event);
  for (const e of events) expect(HarnessEvent.safeParse(e).success).toBe(true);
  expect(RunResult.safeParse(result).success).toBe(true);
  expect(sink.events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return { result, events, runRoot: join(base, 'runs', runId), sink };
}

const stages = (events: HarnessEvent[]) => events.filter((e) => e.type === 'system').map((e) => (e.type === 'system' ? `${e.stage}:${e.status}` : ''));

describe('executeRun', () => {
  it('runs install, probe, the session and teardown, and reports version, usage and both costs', async () => {
    const { result, events, runRoot } = await run({});
    expect(stages(events)).toEqual(['install_harness:started', 'install_harness:completed', 'probe_harness:started', 'probe_harness:completed', 'teardown:started', 'teardown:completed']);
    expect(events.filter((e) => e.type === 'agent')).toEqual([expect.objectContaining({ message: 'All done.', session_id: '11111111-2222-3333-4444-555555555555' })]);
    expect(result).toMatchObject({
      outcome: 'succeeded',
      harness_version: '9.8.7',
      auth_mode: 'api-key',
      canonical_model: 'anthropic/claude-sonnet-4.5',
      session_ids: ['11111111-2222-3333-4444-555555555555'],
      exit_code: 0,
      tokens: { input: 100, output: 10, cache_read: 0, cache_write: 0, reasoning: null },
      reported_cost_usd: 0.5,
      actual_cost_usd: 0.5, // API key + a reported charge: that figure
      comparable_cost_usd: (100 * 3 + 10 * 15) / 1_000_000,
      event_count: events.length,
    });
    expect(existsSync(runRoot)).toBe(false);
  });

  it('an install failure ends the run before a session, as an infrastructure failure with npm’s own words', async () => {
    const broken = createScriptedHarness({ installFails: true });
    try {
      const { result, events } = await run({}, { harnessesRoot: broken.root });
      expect(stages(events)).toEqual(['install_harness:started', 'install_harness:failed', 'teardown:started', 'teardown:completed']);
      expect(result.outcome).toBe('infrastructure_failed');
      expect(result.message).toContain('npm error 404 Not Found');
      expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'install_harness_failed' });
      expect(result.sessions).toEqual([]);
    } finally {
      broken.dispose();
    }
  });

  it('issue 35: an install that fails on the registry (npm E503, a connection refused) is retryable; one that fails on a missing package is not', async () => {
    // A real npm against a registry on 127.0.0.1 that answers 503, and one that answers 404.
    const registry = createServer((req, res) => res.writeHead(req.url?.includes('down') ? 503 : 404, { 'content-type': 'application/json' }).end('{"error":"x"}'));
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const port = (registry.address() as AddressInfo).port;
    const fromRegistry = createScriptedHarness({ installFromRegistry: true });
    try {
      const attempt = { number: 1, of: 3 };
      const down = await run({}, { harnessesRoot: fromRegistry.root, attemptNumber: attempt, env: { TCAB_NPM_REGISTRY: `http://127.0.0.1:${port}/down/` } });
      expect(down.result).toMatchObject({ outcome: 'infrastructure_failed', retryable: true, attempt, sessions: [] });
      expect(down.result.message).toMatch(/npm error code E503/);
      const refused = await run({}, { harnessesRoot: fromRegistry.root, env: { TCAB_NPM_REGISTRY: `http://127.0.0.1:${REFUSING_PORT}/` } });
      expect(refused.result).toMatchObject({ outcome: 'infrastructure_failed', retryable: true });
      expect(refused.result.attempt).toBeUndefined(); // a workstation run is one attempt
      const missing = await run({}, { harnessesRoot: fromRegistry.root, attemptNumber: attempt, env: { TCAB_NPM_REGISTRY: `http://127.0.0.1:${port}/` } });
      expect(missing.result).toMatchObject({ outcome: 'infrastructure_failed', attempt });
      expect(missing.result.message).toMatch(/E404/);
      expect(missing.result.retryable).toBeUndefined();
    } finally {
      fromRegistry.dispose();
      await new Promise<void>((resolve) => registry.close(() => resolve()));
    }
  });

  it('issue 35: an install npm ends with exit 0 but without an optional dependency it could not fetch (the registry\'s 503, a reset, a tarball cut off mid-download) is an incomplete install, retryable; with it fetched, the install completes', async () => {
    // A real npm against a registry on 127.0.0.1 serving scripted-cli, whose optional dependency scripted-cli-native
    // (as Claude Code's per-platform binary) answers 503 or resets the connection while the test says so.
    const registry = await startScriptedRegistry();
    registry.publish('scripted-cli', '1.0.0', { 'cli.sh': '#!/bin/sh\necho 1.0.0\n' }, { scripted: 'cli.sh' }, { optionalDependencies: { 'scripted-cli-native': '1.0.0' } });
    registry.publish('scripted-cli-native', '1.0.0', {});
    const url = registry.url;
    const fromRegistry = createScriptedHarness({ installFromRegistry: true });
    try {
      const attempt = { number: 1, of: 3 };
      const gaveUp = { '503': `${url}scripted-cli-native (503)`, reset: `${url}scripted-cli-native (ECONNRESET)`, 'cut-tarball': '/prefix/node_modules/scripted-cli-native (its download or unpacking failed)' };
      for (const down of ['503', 'reset', 'cut-tarball'] as const) {
        registry.fail('scripted-cli-native', down);
        const incomplete = await run({}, { harnessesRoot: fromRegistry.root, attemptNumber: attempt, env: { TCAB_NPM_REGISTRY: url } });
        expect(incomplete.result, down).toMatchObject({ outcome: 'infrastructure_failed', retryable: true, attempt, sessions: [] });
        expect(incomplete.result.message, down).toContain(`npm ended the install of scripted with exit 0 but gave up fetching ${down === 'cut-tarball' ? 'the optional dependency at ' : ''}`);
        expect(incomplete.result.message, down).toContain(gaveUp[down]);
        expect(stages(incomplete.events), down).toEqual(['install_harness:started', 'install_harness:failed', 'teardown:started', 'teardown:completed']);
      }
      registry.fail('scripted-cli-native', 'up');
      const whole = await run({}, { harnessesRoot: fromRegistry.root, attemptNumber: attempt, env: { TCAB_NPM_REGISTRY: url } });
      expect(stages(whole.events)).toContain('install_harness:completed');
      expect(whole.result.retryable).toBeUndefined();
    } finally {
      fromRegistry.dispose();
      await registry.close();
    }
  });

  it('a run cancelled while it resolves the newest release is cancelled, not an infrastructure failure (nothing to retry)', async () => {
    const registry = await startScriptedRegistry();
    registry.publish('scripted-cli', '1.0.0', { 'cli.sh': '#!/bin/sh\necho 1.0.0\n' }, { scripted: 'cli.sh' });
    registry.fail('scripted-cli', 'hang');
    const fromRegistry = createScriptedHarness({ npmPackage: 'scripted-cli' });
    const abort = new AbortController();
    try {
      const running = run({}, { harnessesRoot: fromRegistry.root, signal: abort.signal, attemptNumber: { number: 1, of: 3 }, env: { TCAB_NPM_REGISTRY: registry.url } });
      await pollUntil('npm view to ask the registry', () => registry.requests.length > 0, { timeoutMs: 60_000 });
      abort.abort();
      const { result, events } = await running;
      expect(result).toMatchObject({ outcome: 'cancelled', message: 'install cancelled', sessions: [] });
      expect(result.retryable).toBeUndefined();
      expect(stages(events)).toEqual(['install_harness:started', 'install_harness:failed', 'teardown:started', 'teardown:completed']);
    } finally {
      fromRegistry.dispose();
      await registry.close();
    }
  });

  it('a probe failure ends the run with the binary’s output, before a session', async () => {
    const broken = createScriptedHarness({ probeFails: true });
    try {
      const { result, events } = await run({}, { harnessesRoot: broken.root });
      expect(stages(events)).toContain('probe_harness:failed');
      expect(result).toMatchObject({ outcome: 'infrastructure_failed', harness_version: null, sessions: [] });
      expect(result.message).toContain('libscripted.so');
    } finally {
      broken.dispose();
    }
  });

  it('seeds the workspace and runs the init command; a failing init ends the run', async () => {
    const ok = await run({ prompt: 'workspace', testCase: { source: { files: [{ path: 'src/a.txt', content: 'a' }] }, init: 'touch initialised' } }, { keep: true });
    expect(stages(ok.events).slice(4, 6)).toEqual(['init_test_case:started', 'init_test_case:completed']);
    expect(readFileSync(join(ok.runRoot, 'workspace-listing'), 'utf8').trim().split('\n').sort()).toEqual(['initialised', 'src']);
    rmSync(ok.runRoot, { recursive: true, force: true });

    const failed = await run({ testCase: { init: 'echo "cannot reach fixture db" >&2; exit 3' } });
    expect(stages(failed.events)).toContain('init_test_case:failed');
    expect(failed.result.outcome).toBe('infrastructure_failed');
    expect(failed.result.message).toContain('cannot reach fixture db');
    expect(failed.events.some((e) => e.type === 'agent')).toBe(false);
  });

  it('kills the whole process tree at the maximum runtime and says so', async () => {
    const { result, events, runRoot } = await run({ prompt: 'sleep', maxRuntimeSeconds: 3 }, { keep: true });
    expect(result.outcome).toBe('timed_out');
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', code: 'max_runtime_exceeded', message: 'the run exceeded its maximum runtime of 3s; the harness process group was terminated' }));
    // The grandchild `sleep 600` (its pid written by the harness) must be gone too.
    const pid = Number(readFileSync(join(runRoot, 'sleep.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(1);
    expect(await processRunning(pid)).toBe(false);
  });

  it('teardown kills what the harness left running outside its process group, and says so', async () => {
    const { result, events, runRoot } = await run({ prompt: 'daemon' }, { keep: true });
    expect(result.outcome).toBe('succeeded');
    const pid = Number(readFileSync(join(runRoot, 'daemon.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(1);
    expect(await processRunning(pid)).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ type: 'warning', code: 'leftover_processes', message: `the harness left 1 process(es) running after its session, killed: sleep (${pid})` }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'system', stage: 'teardown', status: 'completed', message: expect.stringContaining(`killed 1 process(es) the harness left running: sleep (${pid})`) }));
  });

  it('a non-zero exit is a harness failure with its stderr as a warning and in the terminal error', async () => {
    const { result, events } = await run({ prompt: 'exit7' });
    expect(result).toMatchObject({ outcome: 'harness_failed', exit_code: 7 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'warning', message: 'fatal: scripted failure' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', message: 'scripted exited with code 7:\nfatal: scripted failure' }));
  });

  it('issue 21: a stack trace on stderr is one warning, published after a quiet gap while the harness still runs', async () => {
    // Timers fired by the test: the quiet gap passes when the test says so, no sleep.
    const armed = new Map<number, () => void>();
    let next = 0;
    const timers: Timers = { setTimeout: (callback) => (armed.set(++next, callback), next), clearTimeout: (handle) => void armed.delete(handle as number) };
    const sink = new MemorySink();
    const runId = `t-trace-${Math.random().toString(36).slice(2, 8)}`;
    const running = run({ prompt: 'stderr-trace' }, { runId, timers, sinks: [sink] });
    const warnings = () => sink.events.map((e) => e.event).filter((e) => e.type === 'warning');
    const openGate = () => writeFileSync(join(base, 'runs', runId, 'gate'), '');
    try {
      // The trace has been read and its diagnostic is open: the gap timer is armed, nothing published yet.
      await vi.waitFor(() => expect(armed.size).toBe(1), { timeout: 30_000, interval: 20 });
      expect(warnings()).toEqual([]);
      for (const fire of [...armed.values()]) fire();
      expect(warnings()).toEqual([expect.objectContaining({ message: 'DeprecationWarning: scripted deprecation\n    at one (/scripted.js:1:1)\n    at two (/scripted.js:2:2)' })]);
    } finally {
      openGate(); // the harness waits for it, pass or fail
    }
    const { result } = await running;
    expect(result.outcome).toBe('succeeded');
    expect(warnings()).toHaveLength(1);
  });

  it('a 16 MiB line becomes one truncated unknown event and the session goes on', async () => {
    const { result, events } = await run({ prompt: 'longline' });
    const unknown = events.filter((e) => e.type === 'unknown');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatchObject({ original_bytes: 16 * 1024 * 1024 });
    expect(events.at(-3)).toMatchObject({ type: 'agent', message: 'All done.' });
    expect(result.outcome).toBe('succeeded');
  });

  it('never lets a secret out: the canary key is scrubbed from events, warnings and the result; the harness sees only its own key', async () => {
    const { result, events, runRoot } = await run(
      { prompt: 'canary', testCase: { source: { files: [{ path: 'README.md', content: 'seed' }] } } },
      { keep: true, env: { OPENAI_API_KEY: 'sk-fake-other-provider-key-000000', TCAB_NATS_PASSWORD: 'fake-nats-password-000' } },
    );
    const published = JSON.stringify({ events, result });
    expect(published).not.toContain(CANARY);
    expect(published).toContain(SECRET_MARKER);
    // The ATIF export is built from these same scrubbed events: the marker reaches it, the key does not.
    const atif = JSON.stringify(toAtif({ runId: result.run_id, events, result, spec: { harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'canary' } }));
    expect(atif).not.toContain(CANARY);
    expect(atif).toContain(SECRET_MARKER);
    const env = readFileSync(join(runRoot, 'env-seen'), 'utf8');
    expect(env).toContain(`ANTHROPIC_API_KEY=${CANARY}`);
    expect(env).not.toContain('sk-fake-other-provider-key');
    expect(env).not.toContain('fake-nats-password');
    expect(env.split('\n').map((l) => l.split('=')[0]).filter(Boolean).sort()).toEqual(
      expect.arrayContaining(['ANTHROPIC_API_KEY', 'HOME', 'LANG', 'LC_ALL', 'PATH', 'TMPDIR']),
    );
    expect(readdirSync(join(runRoot, 'workspace'))).toEqual(['README.md']);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('drives several sessions, resuming the harness session id with the continue prompt', async () => {
    const { result, events } = await run({ sessions: 3, continuePrompt: 'Keep going.' });
    expect(result.sessions.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(result.session_ids).toEqual(['11111111-2222-3333-4444-555555555555']);
    expect(events.filter((e) => e.type === 'agent' && e.message.startsWith('resumed')).map((e) => (e.type === 'agent' ? e.message : ''))).toEqual(['resumed with: Keep going.', 'resumed with: Keep going.']);
    // Usage and reported cost add up across sessions.
    expect(result.tokens).toMatchObject({ input: 300, output: 30 });
    expect(result.reported_cost_usd).toBeCloseTo(1.5, 10);
  });

  it('an unavailable harness fails before install, naming what to set or sign in to', async () => {
    const { result, events } = await run({}, { env: { ANTHROPIC_API_KEY: '' } });
    expect(stages(events)).toEqual([]);
    expect(result.outcome).toBe('infrastructure_failed');
    expect(result.message).toBe('Scripted CLI is not available: set ANTHROPIC_API_KEY or TCAB_API_KEY_SCRIPTED, or run scripted login to create ~/.scripted/credentials.json');
  });

  it('subscription mode copies the credential file into the run home (0600), injects no key, and keeps it out of the workspace', async () => {
    const home = join(base, 'user-home');
    mkdirSync(join(home, '.scripted'), { recursive: true });
    const token = 'oauth-fake-refresh-token-abcdef0123456789';
    writeFileSync(join(home, '.scripted/credentials.json'), JSON.stringify({ refresh_token: token }));
    const { result, events, runRoot } = await run(
      { prompt: 'canary', testCase: { source: { files: [{ path: 'x.txt', content: 'x' }] } } },
      { keep: true, credentialSource: { kind: 'home', home } },
    );
    expect(result.auth_mode).toBe('subscription');
    const copied = join(runRoot, 'home/.scripted/credentials.json');
    expect(statSync(copied).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(runRoot, 'env-seen'), 'utf8')).not.toContain('ANTHROPIC_API_KEY');
    expect(readdirSync(join(runRoot, 'workspace'))).toEqual(['x.txt']);
    expect(JSON.stringify(events)).not.toContain(token);
    expect(result.actual_cost_usd).toBe(0.5); // subscription + a reported figure: that figure
    rmSync(runRoot, { recursive: true, force: true });
  });
});

describe('executeRun settings (the driver env schema)', () => {
  it('a bad setting in a caller\'s environment is a usage error naming it, before any event, with the sinks closed', async () => {
    const sink = new MemorySink();
    const env = { TCAB_RUN_ROOT: join(base, 'never'), TCAB_NPM_REGISTRY: 'registry.internal:4873', ANTHROPIC_API_KEY: CANARY };
    const running = executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'plain' }), { runId: 'bad-setting', env, sinks: [sink], user: {}, credentialSource: { kind: 'home', home: join(base, 'no-home') }, harnessesRoot: harness.root });
    await expect(running).rejects.toThrow(new InvalidInputError('TCAB_NPM_REGISTRY', 'must be an http(s) URL, got "registry.internal:4873"'));
    expect(sink.events).toEqual([]);
    expect(sink.closed).toBe(true);
    expect(existsSync(join(base, 'never'))).toBe(false);
  });

  it('typed settings are used as given: the environment is not read for them (the driver decoded it once)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tcab-settings-root-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const { result } = await run({}, { env: { TCAB_RUN_ROOT: join(base, 'not-this-one'), TCAB_NPM_REGISTRY: 'not a url' }, settings: { TCAB_RUN_ROOT: root, TCAB_NPM_REGISTRY: 'https://registry.npmjs.org/', baseUrls: {} } });
    expect(result.outcome, result.message).toBe('succeeded');
    expect(existsSync(join(root, 'runs'))).toBe(true);
    expect(existsSync(join(base, 'not-this-one'))).toBe(false);
  });
});
