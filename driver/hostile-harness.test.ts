// Harnesses that do what a hostile or careless CLI does, run by a root driver as the unprivileged run user (uid
// 1000 when the suite runs as root, as in CI): leftovers holding stdout, a daemon, a CLI that never exits, a 100 MB
// stderr flood, and a live NDJSON consumer on the other end of a pipe. Real processes throughout; the "CLI" is a
// shell script with the scripted harness's manifest and the real Claude adapter (test/support/scripted-harness.ts).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findLeftovers, killLeftovers, processRunning } from './leftovers.ts';
import { executeRun } from './run.ts';
import type { DriverOptions } from './run.ts';
import { DEFAULT_KILL_GRACE_MS } from './process.ts';
import { logLinesOf } from '../test/support/log-lines.ts';
import { resolveRunUser } from './run-user.ts';
import type { EventSink, SequencedEvent } from './sinks/sink.ts';
import { RunSpec } from '../shared/run.ts';
import type { RunResult, RunSpecInput } from '../shared/run.ts';
import type { HarnessEvent } from '../shared/events.ts';
import { startStubModelServer } from './stub-models/index.ts';
import { createScriptedHarness } from '../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../test/support/scripted-harness.ts';

const ROOT = join(import.meta.dirname, '..');
const CANARY = 'sk-ant-fake-canary-hostile-0123456789';
const FLOOD_LINE = `${'stderr noise from a hostile harness '.repeat(8).slice(0, 255)}\n`; // 256 bytes with the newline
const FLOOD_LINES_BYTES = 64 * 1024 * 1024;
const FLOOD_HUGE_LINE_BYTES = 36 * 1024 * 1024;

/** The hostile CLI: Claude-shaped stream-json around misbehaviour picked by the prompt (argv after -p). */
const script = (pids: string) => String.raw`#!/bin/sh
if [ "$1" = "--version" ]; then echo "9.8.7 (Scripted)"; exit 0; fi
prompt="$2"
pids=${pids}
sid=11111111-2222-3333-4444-555555555555
say() { printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"'"$1"'"}]},"session_id":"'$sid'"}'; }
id -u > "$pids/$prompt.uid"
printf '%s\n' '{"type":"system","subtype":"init","cwd":"'"$PWD"'","session_id":"'$sid'","model":"claude-sonnet-4-5"}'
case "$prompt" in
  holds-stdout)
    # A background child that inherits stdout and outlives the harness.
    sleep 600 & echo $! > "$pids/holds-stdout.pid" ;;
  daemonizes)
    # A daemon in its own session that keeps the harness's stdout and stderr.
    setsid sh -c 'echo $$ > "'"$pids"'/daemonizes.pid"; exec sleep 600' &
    while [ ! -s "$pids/daemonizes.pid" ]; do :; done ;;
  never-exits)
    # Ignores SIGTERM, and leaves a daemon that ignores it too holding the pipes.
    setsid sh -c 'echo $$ > "'"$pids"'/never-exits.pid"; trap "" TERM; exec sleep 600' &
    trap '' TERM
    say "working forever"
    while :; do sleep 1; done ;;
  stderr-flood)
    yes '${FLOOD_LINE.slice(0, -1)}' | head -c ${FLOOD_LINES_BYTES} >&2
    head -c ${FLOOD_HUGE_LINE_BYTES} /dev/zero | tr '\0' 'e' >&2; printf '\n' >&2 ;;
  gate)
    say "waiting for the gate"
    while [ ! -e "$pids/gate" ]; do sleep 0.02; done ;;
esac
say "All done."
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"All done.","session_id":"'$sid'","total_cost_usd":0.5,"usage":{"input_tokens":100,"output_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`;

let base: string;
let pids: string;
let harness: ScriptedHarness;
/** Every run's HOME: whatever a failing test left running is found by it and killed. */
const homes: string[] = [];
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-hostile-'));
  pids = mkdtempSync(join(tmpdir(), 'tcab-hostile-pids-'));
  chmodSync(pids, 0o777); // the run user writes its pids here
  harness = createScriptedHarness();
  writeFileSync(join(harness.root, 'scripted', 'scripted-cli.sh'), script(pids));
});
afterAll(async () => {
  await Promise.all(homes.map((home) => killLeftovers(home)));
  rmSync(base, { recursive: true, force: true });
  rmSync(pids, { recursive: true, force: true });
  harness.dispose();
});

/** Keeps counts and the few events a test looks at, not a 100 MB flood's worth of warnings. */
class CountingSink implements EventSink {
  readonly counts: Record<string, number> = {};
  readonly kept: HarnessEvent[] = [];
  longestWarning = 0;
  results: RunResult[] = [];
  event({ event }: SequencedEvent): void {
    this.counts[event.type] = (this.counts[event.type] ?? 0) + 1;
    if (event.type === 'warning') this.longestWarning = Math.max(this.longestWarning, event.message.length);
    if (event.type !== 'warning' || event.code !== undefined) this.kept.push(event);
  }
  result(result: RunResult): void {
    this.results.push(result);
  }
  async close(): Promise<void> {}
}

async function hostileRun(prompt: string, spec: Partial<RunSpecInput> = {}, options: Partial<DriverOptions> = {}) {
  const sink = new CountingSink();
  const runId = `hostile-${prompt}-${Math.random().toString(36).slice(2, 8)}`;
  const env = { TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: CANARY };
  const user = resolveRunUser(env, process.getuid!());
  const home = join(base, 'runs', runId, 'home');
  homes.push(home);
  const began = Date.now();
  const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt, ...spec }), {
    runId,
    env,
    sinks: [sink],
    user,
    credentialSource: { kind: 'home', home: join(base, 'no-home') },
    harnessesRoot: harness.root,
    ...options,
  });
  return { result, sink, user, elapsedMs: Date.now() - began, home };
}

const pidOf = (name: string) => Number(readFileSync(join(pids, `${name}.pid`), 'utf8'));

describe('hostile harnesses', () => {
  it.each(['holds-stdout', 'daemonizes'])(
    'finding 4: a harness that exits while its leftover (%s) holds stdout ends its run promptly as succeeded, and nothing of the run is left running',
    async (prompt) => {
      const { result, sink, home } = await hostileRun(prompt, { maxRuntimeSeconds: 120 });
      expect(result.outcome).toBe('succeeded');
      expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'agent', message: 'All done.' }));
      expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'warning', code: 'output_held_open' }));
      // The leftover sleeps 600 s: the session ended with the harness, after a drain of about a second.
      expect(result.sessions[0]!.duration_ms).toBeLessThan(10_000);
      expect(await processRunning(pidOf(prompt))).toBe(false);
      expect(await findLeftovers(home)).toEqual([]);
      // A root driver (CI, this suite as root) runs the harness as the unprivileged run user.
      expect(Number(readFileSync(join(pids, `${prompt}.uid`), 'utf8'))).toBe(process.getuid!() === 0 ? 1000 : process.getuid!());
    },
  );

  it('finding 4: a harness that never exits (ignoring SIGTERM, with a daemon holding its pipes) times out, and the whole run ends within max-runtime + kill grace', async () => {
    const maxRuntimeSeconds = 2;
    const { result, sink, elapsedMs, home } = await hostileRun('never-exits', { maxRuntimeSeconds });
    expect(result.outcome).toBe('timed_out');
    expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'error', code: 'max_runtime_exceeded' }));
    expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'system', stage: 'teardown', status: 'completed' }));
    // Teardown found the daemon by the run's HOME and killed it.
    expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'warning', code: 'leftover_processes' }));
    const marginMs = 4000; // teardown (kill and wait for the daemon, remove the run directories) on a loaded machine
    expect(elapsedMs).toBeLessThan(maxRuntimeSeconds * 1000 + DEFAULT_KILL_GRACE_MS + marginMs);
    expect(await processRunning(pidOf('never-exits'))).toBe(false);
    expect(await findLeftovers(home)).toEqual([]);
  });

  it('a 100 MB stderr flood (many lines and one huge line) completes with every line a warning, and the driver stays within bounded memory', async () => {
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
    let run;
    try {
      run = await hostileRun('stderr-flood', { maxRuntimeSeconds: 120 });
    } finally {
      clearInterval(sampler);
    }
    const { result, sink } = run;
    const growthMb = (peak - before) / (1024 * 1024);
    console.info(`stderr flood: ${(FLOOD_LINES_BYTES + FLOOD_HUGE_LINE_BYTES) / 1024 ** 2} MB, driver RSS ${(before / 1024 ** 2).toFixed(0)} MB -> peak ${(peak / 1024 ** 2).toFixed(0)} MB (+${growthMb.toFixed(0)} MB), ${sink.counts.warning} warnings`);
    expect(result.outcome).toBe('succeeded');
    expect(sink.counts.warning).toBe(FLOOD_LINES_BYTES / FLOOD_LINE.length + 1);
    // The huge line is cut at the line cap (8 MiB) with a marker, not held whole.
    expect(sink.longestWarning).toBeGreaterThan(8 * 1024 * 1024 - 1);
    expect(sink.longestWarning).toBeLessThan(8 * 1024 * 1024 + 200);
    expect(sink.kept).toContainEqual(expect.objectContaining({ type: 'agent', message: 'All done.' }));
    // Measured +70..92 MB (young-generation garbage and a few copies of the 8 MiB cut line): it does not grow with
    // the flood's size, which alone would be +100 MB held.
    expect(growthMb).toBeLessThan(160);
  });

  it('finding 5: a consumer on the driver’s NDJSON pipe sees each event while the harness is still running', async () => {
    // The driver as `tcab run --json` and the driver Pod run it: events to stdout through the TerminalSink.
    const dir = mkdtempSync(join(tmpdir(), 'tcab-live-'));
    const entry = join(dir, 'driver-entry.ts');
    const imports = (path: string) => JSON.stringify(join(ROOT, path));
    writeFileSync(
      entry,
      `import { executeRun } from ${imports('driver/run.ts')};
import { TerminalSink } from ${imports('driver/sinks/terminal.ts')};
import { resolveRunUser } from ${imports('driver/run-user.ts')};
import { RunSpec } from ${imports('shared/run.ts')};
const env = { TCAB_RUN_ROOT: ${JSON.stringify(base)}, ANTHROPIC_API_KEY: ${JSON.stringify(CANARY)} };
const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'gate', maxRuntimeSeconds: 60 }), {
  runId: 'hostile-live-' + process.pid, env, user: resolveRunUser(env, process.getuid()), credentialSource: { kind: 'home', home: '/nonexistent' },
  harnessesRoot: ${JSON.stringify(harness.root)},
  sinks: [new TerminalSink(process.stdout, { format: 'json', resultFile: ${JSON.stringify(join(dir, 'result.json'))} })],
});
process.exitCode = result.outcome === 'succeeded' ? 0 : 1;
`,
    );
    const gate = join(pids, 'gate');
    const driver = spawn(process.execPath, [entry], { stdio: ['ignore', 'pipe', 'inherit'] });
    homes.push(join(base, 'runs', `hostile-live-${driver.pid}`, 'home'));
    const lines: string[] = [];
    let partial = '';
    driver.stdout.setEncoding('utf8').on('data', (text: string) => {
      const parts = (partial + text).split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
    });
    const exited = new Promise<number | null>((resolve) => driver.on('exit', resolve));
    const messages = () => lines.map((l) => JSON.parse(l) as HarnessEvent).flatMap((e) => (e.type === 'agent' ? [e.message] : []));
    try {
      // The handshake: the harness waits for the gate file, which the test creates only after it saw the event.
      await vi.waitFor(() => expect(messages()).toContain('waiting for the gate'), { timeout: 30_000, interval: 20 });
      expect(messages()).not.toContain('All done.');
      writeFileSync(gate, '');
      expect(await exited).toBe(0);
      expect(messages()).toEqual(['waiting for the gate', 'All done.']);
    } finally {
      driver.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('finding 13: a driver whose NATS URL is malformed or unreachable', () => {
    const password = 'sk-fake-nats-url-password-000';

    /** tcab-driver as in a Pod (gg against the stub model: no install), its stdout and stderr collected. */
    async function driverWithNats(natsUrl: string, maxRuntimeSeconds: number) {
      const stub = await startStubModelServer({ script: { steps: [{ text: 'Hello from the stub.' }] } });
      const runId = `hostile-nats-${Math.random().toString(36).slice(2, 8)}`;
      homes.push(join(base, 'runs', runId, 'home'));
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        TCAB_RUN_ROOT: base,
        TCAB_RUN_ID: runId,
        TCAB_RUN_SPEC: JSON.stringify({ harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hello', maxRuntimeSeconds }),
        TCAB_BASE_URL_GG: stub.url,
        ANTHROPIC_API_KEY: CANARY,
        TCAB_CREDENTIALS_DIR: join(base, 'no-credentials'),
        TCAB_NATS_URL: natsUrl,
      };
      const began = Date.now();
      const driver = spawn(process.execPath, [join(ROOT, 'driver', 'main.ts')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const output = { stdout: '', stderr: '' };
      driver.stdout.setEncoding('utf8').on('data', (text: string) => (output.stdout += text));
      driver.stderr.setEncoding('utf8').on('data', (text: string) => (output.stderr += text));
      const exited = new Promise<{ code: number | null; elapsedMs: number }>((resolve) => driver.on('exit', (code) => resolve({ code, elapsedMs: Date.now() - began })));
      const done = exited.finally(() => stub.close());
      return { runId, output, exited: done, running: () => driver.exitCode === null && driver.signalCode === null, kill: () => driver.kill('SIGKILL') };
    }

    const ndjson = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    /** The driver's own warning lines (pino JSON on stderr), bound to its run and harness. */
    const warned = (driver: { runId: string; output: { stderr: string } }, text: string) =>
      expect(logLinesOf('tcab-driver', driver.output.stderr)).toContainEqual(expect.objectContaining({ level: 'warn', runId: driver.runId, harness: 'gg', msg: expect.stringContaining(text) }));

    it('a malformed URL is named (without its password) with the parse error, the run succeeds and its events are dumped as NDJSON at once', async () => {
      const driver = await driverWithNats(`nats://tcab:${password}@[bad-host`, 120);
      try {
        const { code, elapsedMs } = await driver.exited;
        expect(code).toBe(0);
        warned(driver, 'cannot connect to NATS nats://[bad-host: malformed URL (Invalid URL); nothing will be published');
        expect(elapsedMs).toBeLessThan(60_000); // far from the 120 s deadline: nothing waits for a URL that cannot work
        const lines = ndjson(driver.output.stdout);
        const events = lines.filter((l) => l.undelivered === undefined);
        const undelivered = lines.filter((l) => l.undelivered === true);
        expect(events.length).toBeGreaterThan(0);
        expect(undelivered).toHaveLength(events.length + 1); // every event and the result
        expect(driver.output.stdout + driver.output.stderr).not.toContain(password);
      } finally {
        driver.kill();
      }
    });

    it('an unreachable server is named with the reason while the run is still going; undelivered messages are dumped after the deadline', async () => {
      const driver = await driverWithNats(`nats://tcab:${password}@127.0.0.1:1`, 12);
      try {
        await vi.waitFor(() => warned(driver, 'cannot connect to NATS nats://127.0.0.1:1: connection refused; the run goes on'), { timeout: 6000, interval: 20 });
        expect(driver.running()).toBe(true);
        const { code } = await driver.exited;
        expect(code).toBe(0);
        expect(ndjson(driver.output.stdout).filter((l) => l.undelivered === true).at(-1)).toMatchObject({ subject: expect.stringMatching(/\.result$/) });
        expect(driver.output.stdout + driver.output.stderr).not.toContain(password);
      } finally {
        driver.kill();
      }
    });
  });
});
