// gg through the real driver path (run user, probe = gg's own version, no install, supervision) against the stub
// model servers: every tool, a model error, a tool error and the runtime budget, with exact events and usage.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { processRunning } from '../../driver/leftovers.ts';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { runDirsFor } from '../../driver/run-dirs.ts';
import { RunSpec } from '../../shared/run.ts';
import { renderScript, startStubModelServer } from '../../driver/stub-models/index.ts';
import type { StubScriptInput } from '../../shared/stub-script.ts';
import { strip } from '../../test/support/translate-fixture.ts';

let base: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-gg-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function gg(model: string, script: StubScriptInput, extra: { maxRuntimeSeconds?: number; key?: string; runId?: string; signal?: AbortSignal } = {}) {
  const runId = extra.runId ?? `gg-${Math.random().toString(36).slice(2, 8)}`;
  const dirs = runDirsFor(base, runId);
  const stub = await startStubModelServer({ script: renderScript(script, { workdir: dirs.workspace, home: dirs.home }) });
  const sink = new MemorySink();
  const keyVar = model.startsWith('claude') ? 'ANTHROPIC_API_KEY' : 'OPENROUTER_API_KEY';
  const env = { ...process.env, TCAB_RUN_ROOT: base, ANTHROPIC_API_KEY: '', OPENROUTER_API_KEY: '', [keyVar]: extra.key ?? 'sk-fake-gg-key-0000000000', TCAB_BASE_URL_GG: stub.url };
  try {
    const result = await executeRun(RunSpec.parse({ harness: 'gg', model, prompt: 'do the thing', maxRuntimeSeconds: extra.maxRuntimeSeconds ?? 120 }), {
      runId,
      env,
      sinks: [sink],
      user: resolveRunUser(env, process.getuid!()),
      credentialSource: { kind: 'home', home: join(base, 'nobody') },
      homeFiles: { '.gg/skills/demo/SKILL.md': '---\nname: demo\n---\nSay hello.\n' },
      signal: extra.signal,
    });
    return { result, events: sink.events.map((e) => e.event), dirs, requests: stub.requests };
  } finally {
    await stub.close();
  }
}

const ALL_TOOLS: StubScriptInput = {
  steps: [
    { thinking: 'Plan: write, read, edit, search, list, load a skill, run commands.', text: 'Starting.', tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\nworld\n' } } },
    { tool: { name: 'read_file', args: { path: 'hello.txt', start_line: 1, end_line: 2 } } },
    { tool: { name: 'edit_file', args: { path: 'hello.txt', old_string: 'world', new_string: 'there' } } },
    { tool: { name: 'search', args: { mode: 'grep', pattern: 'hel+o' } } },
    { tool: { name: 'search', args: { mode: 'glob', pattern: '**/*.txt' } } },
    { tool: { name: 'list_directory', args: {} } },
    { tool: { name: 'load_skill', args: { name: 'demo' } } },
    { tool: { name: 'shell', args: { command: 'cat hello.txt' } } },
    { tool: { name: 'shell', args: { command: 'exit 3' } } },
    { tool: { name: 'edit_file', args: { path: 'hello.txt', old_string: 'absent', new_string: 'x' } } },
    { text: 'All done.' },
  ],
};

describe('gg (Anthropic wire)', () => {
  it('runs every tool with outcomes, reports no install stage, probes its own version, and sums usage exactly', async () => {
    const { result, events, dirs, requests } = await gg('claude-sonnet-4-5', ALL_TOOLS);
    const W = dirs.workspace;
    expect(events.filter((e) => e.type === 'system').map((e) => (e.type === 'system' ? `${e.stage}:${e.status}` : ''))).toEqual(['probe_harness:started', 'probe_harness:completed', 'teardown:started', 'teardown:completed']);
    expect(strip(events.filter((e) => e.type !== 'system'))).toEqual([
      { type: 'reasoning', message: 'Plan: write, read, edit, search, list, load a skill, run commands.' },
      { type: 'agent', message: 'Starting.' },
      { type: 'write', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'write_file' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read_file' },
      { type: 'write', path: `${W}/hello.txt`, start_line: 2, end_line: 2, is_success: true, tool_name: 'edit_file' },
      { type: 'search', query: 'hel+o', path: W, is_success: true, tool_name: 'search:grep' },
      { type: 'search', query: '**/*.txt', path: W, is_success: true, tool_name: 'search:glob' },
      { type: 'list', path: W, is_success: true, tool_name: 'list_directory' },
      { type: 'skill', path: `${dirs.home}/.gg/skills/demo/SKILL.md`, skill_name: 'demo', start_line: 1, end_line: 5, is_success: true, tool_name: 'load_skill' },
      { type: 'command', command: 'cat hello.txt', working_directory: W, exit_code: 0, is_success: true, tool_name: 'shell' },
      { type: 'command', command: 'exit 3', working_directory: W, exit_code: 3, is_success: false, tool_name: 'shell' },
      { type: 'write', path: `${W}/hello.txt`, is_success: false, tool_name: 'edit_file' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 11 model calls x (900 uncached + 300 cache read + 50 cache write, 80 output) on the Anthropic wire.
    expect(result).toMatchObject({ outcome: 'succeeded', harness_slug: 'gg', harness_version: '0.1.0', auth_mode: 'api-key', canonical_model: 'anthropic/claude-sonnet-4.5' });
    expect(result.tokens).toEqual({ input: 9900, cache_read: 3300, cache_write: 550, output: 880, reasoning: 0 });
    expect(result.comparable_cost_usd).toBeCloseTo((9900 * 3 + 3300 * 0.3 + 550 * 3.75 + 880 * 15) / 1e6, 12);
    expect(requests.filter((r) => r.path === '/v1/messages').every((r) => r.headers['x-api-key'] === 'sk-fake-gg-key-0000000000')).toBe(true);
  });

  it('a model error ends the session as a harness failure carrying the HTTP status', async () => {
    const { result, events } = await gg('claude-sonnet-4-5', { steps: [{ error: { status: 400, message: 'mock bad request' } }] });
    expect(result.outcome).toBe('harness_failed');
    expect(events.find((e) => e.type === 'error')).toMatchObject({ message: expect.stringContaining('mock bad request'), code: 'http_400' });
  });

  it('a call to a tool that does not exist is a tool error the loop survives', async () => {
    const { result, events } = await gg('claude-sonnet-4-5', { steps: [{ tool: { name: 'no_such_tool', args: {} } }, { text: 'Recovered.' }] });
    expect(events.find((e) => e.type === 'warning')).toMatchObject({ code: 'tool_error', message: expect.stringContaining('no_such_tool') });
    expect(events.filter((e) => e.type === 'agent').map((e) => (e.type === 'agent' ? e.message : ''))).toContain('Recovered.');
    expect(result.outcome).toBe('succeeded');
  });

  it('a cancelled run stops gg mid-command: the command is killed with it and the usage so far is reported', async () => {
    const runId = `gg-cancel-${Math.random().toString(36).slice(2, 8)}`;
    const pidFile = join(runDirsFor(base, runId).workspace, 'command.pid');
    const cancel = new AbortController();
    // The command runs in its own process group (gg's), which the driver's signal to gg's group never reaches.
    const steps = [{ tool: { name: 'shell', args: { command: 'echo started' } } }, { tool: { name: 'shell', args: { command: 'echo $$ > command.pid; exec sleep 600' } } }, { text: 'never' }];
    const running = gg('claude-sonnet-4-5', { steps }, { runId, signal: cancel.signal });
    await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8').trim()).toMatch(/^\d+$/), { timeout: 30_000, interval: 50 });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    cancel.abort();
    const { result, events } = await running;
    expect(result.outcome).toBe('cancelled');
    // gg killed it itself: the driver's teardown found nothing of the run still running.
    expect(events.filter((e) => e.type === 'warning' && e.code === 'leftover_processes')).toEqual([]);
    // The model step finished before the signal (the first command's) keeps its usage, one stub call's worth (no
    // reasoning tokens on the Anthropic wire); the step the signal cut short is not counted: the AI SDK reports a
    // step's usage only once its tools are done.
    expect(result.tokens).toEqual({ input: 900, cache_read: 300, cache_write: 50, output: 80, reasoning: 0 });
    expect(await processRunning(pid)).toBe(false);
  });

  it('the runtime budget stops a session stuck in a command', async () => {
    const { result, events } = await gg('claude-sonnet-4-5', { steps: [{ tool: { name: 'shell', args: { command: 'sleep 60' } } }, { text: 'never' }] }, { maxRuntimeSeconds: 3 });
    expect(result.outcome).toBe('timed_out');
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', code: 'max_runtime_exceeded', message: 'the run exceeded its maximum runtime of 3s; the harness process group was terminated' }));
  });
});

describe('gg (OpenAI-compatible wire)', () => {
  it('runs tools against a Chat Completions endpoint and normalizes OpenAI-style usage (cached inside prompt tokens)', async () => {
    const { result, events, requests } = await gg('openrouter/qwen/qwen3-coder', {
      steps: [{ thinking: 'check the tree', tool: { name: 'list_directory', args: {} } }, { tool: { name: 'shell', args: { command: 'echo ok' } } }, { text: 'Done.' }],
    });
    expect(strip(events.filter((e) => e.type !== 'system')).map((e) => e.type)).toEqual(['reasoning', 'list', 'command', 'agent']);
    // 3 calls x 1200 prompt tokens of which 300 cached; 80 completion tokens of which 12 reasoning.
    expect(result.tokens).toEqual({ input: 2700, cache_read: 900, cache_write: 0, output: 240, reasoning: 36 });
    expect(result.canonical_model).toBe('qwen/qwen3-coder');
    expect(requests.filter((r) => r.path === '/v1/chat/completions').every((r) => r.headers.authorization === 'Bearer sk-fake-gg-key-0000000000')).toBe(true);
  });
});
