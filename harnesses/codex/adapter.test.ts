import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import codexAdapter from './adapter.ts';
import { unwrapShell } from './map-codex-items.ts';
import { codexTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { runTokens } from '../../driver/run/finish.ts';

const adapter = codexAdapter(getHarness('codex').manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');

describe('codex adapter: recorded transcripts', () => {
  it('0.171.0 reference session: every item mapped, wrapper removed, exit codes from the stream', () => {
    const { events, summary } = translateFixture(adapter, fixture('codex-0.171.0-exec-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true },
      { type: 'write', path: '/scratch/work-codex/hello.txt', is_success: true },
      { type: 'write', path: '/scratch/work-codex/hello.txt', is_success: true },
      { type: 'command', command: 'cat hello.txt', exit_code: 0, is_success: true },
      { type: 'command', command: 'grep -rn hello .', exit_code: 0, is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false },
      { type: 'agent', message: 'All done.' },
    ]);
    expect(events.every((e) => (e as { session_id?: string }).session_id === '01a2377b-5570-77f2-8ed0-dab504180bf7')).toBe(true);
    // 7 model calls x 1200 input of which 300 cached: 8400 - 2100 uncached; 560 output of which 84 reasoning.
    expect(summary.result.tokens).toEqual({ input: 8400 - 2100, cache_read: 2100, cache_write: 0, output: 560, reasoning: 84 });
    expect(summary.result.reported_cost_usd).toBeNull();
  });

  it('recorded against the newest release (npm run fixtures:record codex): same mapping, stderr notices as warnings', () => {
    const stderr = readFileSync(fixture('codex-0.171.0-tools.stderr'), 'utf8');
    const { events } = translateFixture(adapter, fixture('codex-0.171.0-tools.jsonl'), { stderr });
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(strip(events).filter((e) => e.type === 'command').map((e) => e.command)).toEqual(['ls -la && echo hi', 'cat hello.txt', 'grep -rn hello .', 'exit 3']);
    expect(events.filter((e) => e.type === 'write')).toHaveLength(2);
  });

  it('an HTTP 400 is one error (turn.failed repeating it is not doubled)', () => {
    const { events, summary } = translateFixture(adapter, fixture('codex-0.171.0-error-400.jsonl'), { exitCode: 1 });
    expect(strip(events)[0]).toEqual({ type: 'error', message: '{"type":"error","error":{"type":"invalid_request_error","message":"mock bad request"}}' });
    expect(events.filter((e) => e.type === 'error')).toHaveLength(2); // + the exit error
    expect(summary.result.is_error).toBe(true);
  });

  it('non-fatal error items and reconnect notices are warnings', () => {
    const { events } = translateText(adapter, lines({ type: 'error', message: 'Reconnecting... 2/5 (unexpected status 401)' }, { type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Falling back from WebSockets to HTTPS transport' } }));
    expect(strip(events)).toEqual([
      { type: 'warning', message: 'Reconnecting... 2/5 (unexpected status 401)' },
      { type: 'warning', message: 'Falling back from WebSockets to HTTPS transport' },
    ]);
  });
});


describe('codex adapter: issue 41 (hand-written snippet in 0.171.0 exec --json format)', () => {
  it('a subagent wait becomes an orchestration event for each agent whose state it changes; one that reports no change is kept as unknown, never dropped', () => {
    const { events } = translateFixture(adapter, fixture('codex-0.171.0-handwritten-collab-wait.jsonl'));
    const [T1, T2] = ['01a2391c-6a02-7d11-9f4b-2c8e7a1d0b53', '01a2391c-8e15-7f32-b6c0-4d9a3e2f1c67'];
    const wait = (id: string) => ({ type: 'unknown', raw: expect.objectContaining({ id, type: 'collab_tool_call', tool: 'wait' }) });
    expect(strip(events)).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: T1 },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: T1, is_success: true },
      // A resume (Codex prints resume_agent as tool "wait") of an ended agent: running again.
      { type: 'orchestration', action: 'subagent_started', subagent_id: T1 },
      // Interrupted: it stopped without completing; Codex reports no failure of its own, so no is_success.
      { type: 'orchestration', action: 'subagent_failed', subagent_id: T1 },
      { type: 'orchestration', action: 'subagent_started', subagent_id: T2 },
      // A wait that timed out on a running agent, and one that reports no state at all: nothing ended or started.
      wait('item_5'),
      wait('item_6'),
      { type: 'orchestration', action: 'subagent_failed', subagent_id: T2 },
      { type: 'agent', message: 'All done.' },
    ]);
  });
});
describe('codex adapter: every item type has a mapping', () => {
  const completed = (item: object) => translateText(adapter, lines({ type: 'thread.started', thread_id: 't' }, { type: 'item.completed', item: { id: 'i', ...item } })).events;
  it.each([
    [{ type: 'command_execution', command: "/bin/bash -lc 'rm -rf x'", exit_code: null, status: 'declined' }, [{ type: 'command', command: 'rm -rf x', is_success: false }]],
    [{ type: 'file_change', changes: [{ path: '/w/a', kind: 'add' }, { path: '/w/b', kind: 'delete' }], status: 'failed' }, [{ type: 'write', path: '/w/a', is_success: false }, { type: 'write', path: '/w/b', is_success: false }]],
    [{ type: 'collab_tool_call', tool: 'spawn_agent', receiver_thread_ids: ['t2'], status: 'completed' }, [{ type: 'orchestration', action: 'subagent_started', subagent_id: 't2' }]],
    [{ type: 'collab_tool_call', tool: 'wait', agents_states: { t2: { status: 'completed' }, t3: { status: 'errored' } }, status: 'completed' }, [{ type: 'orchestration', action: 'subagent_completed', subagent_id: 't2', is_success: true }, { type: 'orchestration', action: 'subagent_failed', subagent_id: 't3', is_success: false }]],
    [{ type: 'collab_tool_call', tool: 'send_input', status: 'completed' }, []],
  ])('%j', (item, expected) => {
    expect(strip(completed(item))).toEqual(expected);
  });

  it.each(['mcp_tool_call', 'web_search', 'todo_list', 'plan', 'brand_new_item'])('%s has no event type: unknown with the raw item', (type) => {
    expect(completed({ type }).map((e) => e.type)).toEqual(['unknown']);
  });

  it('flushes a command that never completed, without an outcome', () => {
    const { events } = translateText(adapter, lines({ type: 'item.started', item: { id: 'c', type: 'command_execution', command: "/bin/bash -lc 'sleep 99'", exit_code: null, status: 'in_progress' } }), { exitCode: 137 });
    expect(strip(events)[0]).toEqual({ type: 'command', command: 'sleep 99' });
  });
});

describe('unwrapShell', () => {
  it.each([
    ["/bin/bash -lc 'ls -la'", 'ls -la'],
    ["/bin/bash -lc 'echo '\\''hi'\\'''", "echo 'hi'"],
    ['/bin/bash -lc "printf \'hello\\\\n\' > a && echo \\"q\\" \\$HOME"', 'printf \'hello\\n\' > a && echo "q" $HOME'],
    ['bash -lc ls', 'bash -lc ls'],
    ["/bin/zsh -lc 'ls'", "/bin/zsh -lc 'ls'"],
  ])('%s -> %s', (raw, expected) => {
    expect(unwrapShell(raw)).toBe(expected);
  });
});

describe('codex usage: cumulative thread totals', () => {
  it('subtracts cached input, keeps reasoning inside output', () => {
    expect(codexTokens({ input_tokens: 1200, cached_input_tokens: 300, cache_write_input_tokens: 0, output_tokens: 80, reasoning_output_tokens: 12 })).toEqual({ input: 900, cache_read: 300, cache_write: 0, output: 80, reasoning: 12 });
  });
  it('takes the last turn.completed of a session, never the sum', () => {
    const usage = (n: number) => ({ type: 'turn.completed', usage: { input_tokens: 1200 * n, cached_input_tokens: 300 * n, output_tokens: 80 * n, reasoning_output_tokens: 12 * n } });
    expect(translateText(adapter, lines(usage(1), usage(2))).summary.result.tokens).toMatchObject({ input: 1800, cache_read: 600, output: 160 });
  });
  it('a resumed chain reports the last session (the thread total), not the sum of sessions', () => {
    const session = (input: number) => ({ index: 0, session_id: 't', exit_code: 0, signal: null, tokens: { input, output: 1, cache_read: 0, cache_write: 0, reasoning: 0 }, reported_cost_usd: null, is_error: false, duration_ms: 1, counts: {} });
    expect(runTokens([session(900), session(1800)], 'thread')).toMatchObject({ input: 1800 });
    expect(runTokens([session(900), session(1800)], 'session')).toMatchObject({ input: 2700 });
  });
});

describe('codex invocation', () => {
  it('runs exec with JSON output, model, approval bypass, closed stdin, and telemetry off', () => {
    const inv = adapter.invocation({ model: 'gpt-5-codex', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['codex', 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-c', 'analytics.enabled=false', '-c', 'check_for_update_on_startup=false', '-m', 'gpt-5-codex', 'fix it']);
    expect(inv.stdin).toBe('close');
    expect(inv.files).toEqual([]);
  });
  it('points Codex at another endpoint through a Responses custom provider whose key is the injected variable', () => {
    const inv = adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/', resumeSessionId: 't1' });
    expect(inv.argv.slice(1, 2)).toEqual(['exec']);
    expect(inv.argv.slice(-3)).toEqual(['resume', 't1', 'p']);
    expect(inv.files).toEqual([{ path: '.codex/config.toml', content: expect.stringContaining('base_url = "http://127.0.0.1:9/v1"') }]);
    expect(inv.files[0]!.content).toContain('env_key = "CODEX_API_KEY"');
    expect(inv.files[0]!.content).toContain('wire_api = "responses"');
  });
});

describe('codex adapter: hostile records (issue 19)', () => {
  const thread = { type: 'thread.started', thread_id: 't' };
  const item = (record: string, fields: object) => ({ type: record, item: fields });
  const command = (id: string, cmd: string, extra: object = {}) => ({ id, type: 'command_execution', command: `/bin/bash -lc '${cmd}'`, exit_code: null, status: 'in_progress', ...extra });
  const done = (id: string, cmd: string, exit_code: unknown, status: unknown = 'completed') => command(id, cmd, { exit_code, status });

  it.each([
    ['a float exit code', done('c', 'ls', 1.5)],
    ['a string exit code', done('c', 'ls', '0')],
    ['a numeric status', done('c', 'ls', 0, 1)],
    ['a null status', done('c', 'ls', 0, null)],
    ['a file change with a numeric status', { id: 'f', type: 'file_change', changes: [{ path: '/w/a' }], status: 1 }],
    ['a subagent spawn with a numeric receiver', { id: 's', type: 'collab_tool_call', tool: 'spawn_agent', receiver_thread_ids: ['t2', 7] }],
  ])('finding 7: %s is unknown with the raw item, never an outcome', (_, raw) => {
    const { events } = translateText(adapter, lines(thread, item('item.completed', raw)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['a numeric command', { id: 'c', type: 'command_execution', command: 42, exit_code: 0, status: 'completed' }],
    ['an agent message without text', { id: 'm', type: 'agent_message', text: null }],
  ])('unknown before issue 19 too, kept so: %s is unknown with the raw item', (_, raw) => {
    const { events } = translateText(adapter, lines(thread, item('item.completed', raw)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['thread.started with a numeric thread id', { type: 'thread.started', thread_id: 7 }],
  ])('finding 7: %s is unknown', (_, raw) => {
    const { events } = translateText(adapter, lines(raw));
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['turn.failed without a message', { type: 'turn.failed', error: { message: 500 } }],
    ['error with a numeric message', { type: 'error', message: 500 }],
    ['item.started with a numeric id', { type: 'item.started', item: { id: 1, type: 'command_execution', command: 'ls' } }],
  ])('unknown before issue 19 too, kept so: %s is unknown', (_, raw) => {
    const { events } = translateText(adapter, lines(raw));
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['a string count', 'cached_input_tokens', '300', { input: null, cache_read: null, cache_write: 0, output: 80, reasoning: 12 }],
    ['a null count', 'output_tokens', null, { input: 900, cache_read: 300, cache_write: 0, output: null, reasoning: 12 }],
    ['a float count', 'reasoning_output_tokens', 1.5, { input: 900, cache_read: 300, cache_write: 0, output: 80, reasoning: null }],
    ['a negative count', 'input_tokens', -5, { input: null, cache_read: 300, cache_write: 0, output: 80, reasoning: 12 }],
    ['a missing count', 'output_tokens', undefined, { input: 900, cache_read: 300, cache_write: 0, output: null, reasoning: 12 }],
  ])('finding 7: usage with %s leaves its classes null and names the field in a warning', (_, field, value, tokens) => {
    const usage = { input_tokens: 1200, cached_input_tokens: 300, cache_write_input_tokens: 0, output_tokens: 80, reasoning_output_tokens: 12, [field]: value };
    const { events, summary } = translateText(adapter, lines(thread, { type: 'turn.completed', usage }));
    expect(summary.result.tokens).toEqual(tokens);
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`turn.completed.usage.${field}`) }]);
  });

  it('finding 8: a float exit code never leaves the translator as an exit code: the completion is unknown, the event valid', () => {
    // translateText also validates every event against shared/events.ts (exit codes are integers there).
    const completed = done('c', 'false', 1.5, 'failed');
    const { events } = translateText(adapter, lines(thread, item('item.started', command('c', 'false')), item('item.completed', completed)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: completed }]);
  });

  it.each([
    [
      'a second start with the same pending id flushes the first call without outcome',
      [item('item.started', command('T1', 'rm -rf /important')), item('item.started', command('T1', 'echo harmless')), item('item.completed', done('T1', 'echo harmless', 0))],
      [{ type: 'command', command: 'rm -rf /important' }, { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true }],
    ],
    [
      'a second start that never completes: both calls are flushed at the end',
      [item('item.started', command('T1', 'rm -rf /important')), item('item.started', command('T1', 'echo harmless'))],
      [{ type: 'command', command: 'rm -rf /important' }, { type: 'command', command: 'echo harmless' }],
    ],
    [
      'a completion that describes another operation than its start does not hide the start',
      [item('item.started', command('T1', 'rm -rf /important')), item('item.completed', done('T1', 'echo harmless', 0))],
      [{ type: 'command', command: 'rm -rf /important' }, { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true }],
    ],
    [
      'a start printed again after its completion is one call',
      [item('item.started', command('a', 'ls')), item('item.completed', done('a', 'ls', 0)), item('item.started', command('a', 'ls'))],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true }],
    ],
    [
      'results before calls: each command is reported once',
      [item('item.completed', done('a', 'ls', 0)), item('item.completed', done('b', 'exit 3', 3, 'failed')), item('item.started', command('a', 'ls')), item('item.started', command('b', 'exit 3'))],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true }, { type: 'command', command: 'exit 3', exit_code: 3, is_success: false }],
    ],
  ])('finding 9: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(thread, ...records)).events)).toEqual(expected);
  });

  it.each([
    [
      'a start repeated for the same operation is one call',
      [item('item.started', command('a', 'ls')), item('item.updated', command('a', 'ls')), item('item.started', command('a', 'ls')), item('item.completed', done('a', 'ls', 0))],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true }],
    ],
  ])('pairing that held before issue 19 too: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(thread, ...records)).events)).toEqual(expected);
  });
});
