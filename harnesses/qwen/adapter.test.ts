import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import qwenAdapter from './adapter.ts';
import { qwenToolKind } from './map-qwen-tools.ts';
import { qwenTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = qwenAdapter(getHarness('qwen').manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-qwen';

describe('qwen adapter: recorded transcripts', () => {
  it('0.24.4 reference session: every record mapped; skill (no file named) is the one unknown; background subagent ends at its notification', () => {
    const { events, summary } = translateFixture(adapter, fixture('qwen-0.24.4-stream-json.jsonl'));
    const stripped = strip(events);
    expect(stripped.filter((e) => e.type !== 'unknown')).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', is_success: true, tool_name: 'run_shell_command' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'write_file' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read_file' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'edit' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'grep_search' },
      { type: 'search', query: '**/*.txt', is_success: true, tool_name: 'glob' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'general-purpose-call_mock16', subagent_name: 'general-purpose' },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'run_shell_command' },
      { type: 'agent', message: 'All done.' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'general-purpose-call_mock16', subagent_name: 'general-purpose', is_success: true },
      { type: 'agent', message: 'All done.' },
    ]);
    expect(stripped.filter((e) => e.type === 'unknown')).toEqual([expect.objectContaining({ raw: expect.objectContaining({ tool_use: expect.objectContaining({ name: 'skill' }) }) })]);
    // 12 calls x 1200 prompt tokens incl. 300 cached: 14400 - 3600 uncached.
    expect(summary.result).toMatchObject({ session_id: '8f178abb-26a5-4982-a25d-ee03588679f2', tokens: { input: 14400 - 3600, cache_read: 3600, output: 960, cache_write: null, reasoning: null }, reported_cost_usd: null, reported_model: 'mock-model' });
  });

  it('recorded against the newest release: 0 unknown for the scenario without a skill', () => {
    const { events } = translateFixture(adapter, fixture('qwen-0.24.4-tools.jsonl'));
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(events.filter((e) => e.type === 'command').map((e) => (e.type === 'command' ? [e.command, e.exit_code ?? null, e.is_success] : []))).toEqual([['ls -la && echo hi', null, true], ['exit 3', 3, false]]);
  });

  it('an HTTP 400: the error from the terminal result', () => {
    const { events, summary } = translateFixture(adapter, fixture('qwen-0.24.4-error-400.jsonl'), { exitCode: 1 });
    expect(strip(events).filter((e) => e.type === 'error')[0]).toEqual({ type: 'error', message: '[API Error: 400 mock bad request]', code: 'error_during_execution' });
    expect(summary.result.is_error).toBe(true);
  });
});

describe('qwen adapter: issue 41 (hand-written snippet in 0.24.4 format)', () => {
  it('a subagent’s start is emitted before any of its events, even when its own records (parent_tool_use_id) come before task_started', () => {
    const { events } = translateFixture(adapter, fixture('qwen-0.24.4-handwritten-subagent-command-before-start.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'general-purpose-call_mock2', subagent_name: 'general-purpose' },
      { type: 'command', command: 'ls', is_success: true, tool_name: 'run_shell_command' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 1, is_success: true, tool_name: 'read_file' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'general-purpose-call_mock2', subagent_name: 'general-purpose', is_success: true },
      { type: 'agent', message: 'All done.' },
    ]);
  });

  it('a shell command’s exit code comes only from Qwen’s own result block, never from the command’s output', () => {
    const { events } = translateFixture(adapter, fixture('qwen-0.24.4-handwritten-shell-output-with-exit-text.jsonl'));
    expect(strip(events).filter((e) => e.type === 'command')).toEqual([
      { type: 'command', command: 'cat ci.log', is_success: true, tool_name: 'run_shell_command' },
      { type: 'command', command: 'cat ci.log && exit 2', exit_code: 2, is_success: false, tool_name: 'run_shell_command' },
    ]);
  });
});

describe('qwen adapter: tools and records', () => {
  it.each([
    ['run_shell_command', 'command'], ['read_file', 'read'], ['read_many_files', 'read'], ['write_file', 'write'], ['edit', 'write'], ['notebook_edit', 'write'],
    ['grep_search', 'search'], ['glob', 'search'], ['list_directory', 'list'], ['agent', 'subagent'],
    ['skill', 'other'], ['web_fetch', 'other'], ['get_goal', 'other'], ['send_message', 'other'], ['cron_create', 'other'], ['monitor', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(qwenToolKind(name)).toBe(kind);
  });

  it('garbage and unknown records become unknown; a killed shell call is flushed without an outcome', () => {
    const text = ['not json', '{"type":"brand_new"}', '{"type":"system","subtype":"new_subtype"}', '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"sleep 9"}}]}}'].join('\n');
    const { events } = translateText(adapter, text, { exitCode: 137 });
    expect(strip(events).map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown', 'command', 'error']);
    expect(strip(events)[3]).toEqual({ type: 'command', command: 'sleep 9', tool_name: 'run_shell_command' });
  });

  it('usage: cached tokens are inside input_tokens and subtracted', () => {
    expect(qwenTokens({ input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 80, total_tokens: 1280 })).toEqual({ tokens: { input: 900, cache_read: 300, output: 80, cache_write: null, reasoning: null }, unreadable: [] });
  });

  it('invocation: positional one-shot prompt, stream-json, yolo, OpenAI-compatible endpoint under /v1', () => {
    const inv = adapter.invocation({ model: 'qwen3-coder-plus', prompt: 'fix it', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9' });
    expect(inv.argv).toEqual(['qwen', '--auth-type', 'openai', '-m', 'qwen3-coder-plus', '-o', 'stream-json', '--yolo', 'fix it']);
    expect(inv.env).toMatchObject({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1', QWEN_USAGE_STATISTICS_ENABLED: 'false' });
    expect(adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h', resumeSessionId: 's' }).argv.slice(-3)).toEqual(['--resume', 's', 'p']);
  });
});

describe('qwen adapter: fields that fail their type are never guessed (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const shell = (id: string, command: string) => ({ type: 'assistant', session_id: 's1', message: { content: [{ type: 'tool_use', id, name: 'run_shell_command', input: { command } }] } });
  const toolResult = (id: string, extra: object) => ({ type: 'user', session_id: 's1', message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'Exit Code: 3', ...extra }] } });

  it.each([['"true"', 'true'], ['42', 42], ['null', null]])('finding 7: a tool result with is_error %s is unknown, and its call is reported without an outcome', (_label, isError) => {
    const { events } = translateText(adapter, lines(shell('c1', 'exit 3'), toolResult('c1', { is_error: isError })));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { type: 'tool_result', tool_use_id: 'c1', content: 'Exit Code: 3', is_error: isError } },
      { type: 'command', command: 'exit 3', tool_name: 'run_shell_command' },
    ]);
  });

  it.each([['"true"', 'true'], ['42', 42], ['null', null]])('finding 7: a result record with is_error %s is unknown, never a verdict', (_label, isError) => {
    const { events, summary } = translateText(adapter, lines({ type: 'result', subtype: 'success', is_error: isError, result: 'done' }));
    expect(strip(events).map((e) => e.type)).toEqual(['unknown']);
    expect(summary.result.is_error).toBeUndefined();
  });

  it.each([
    ['a string input count', { input_tokens: '1200' }, { input: null, cache_read: 300, output: 80 }, 'result.usage.input_tokens'],
    ['a null cache count', { cache_read_input_tokens: null }, { input: null, cache_read: null, output: 80 }, 'result.usage.cache_read_input_tokens'],
    ['a fractional output count', { output_tokens: 80.5 }, { input: 900, cache_read: 300, output: null }, 'result.usage.output_tokens'],
  ])('finding 7: %s leaves what it feeds unknown (null) with a warning, never 0', (_label, bad, expected, field) => {
    const usage = { input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 80, ...bad };
    const { events, summary } = translateText(adapter, lines({ type: 'result', subtype: 'success', is_error: false, result: 'done', usage }));
    expect(summary.result.tokens).toEqual({ ...expected, cache_write: null, reasoning: null });
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining(field), code: 'unreadable_usage' }]);
  });

  it('finding 9: a reused tool-call id reports the first call too (without an outcome); the result pairs with the latest', () => {
    const { events } = translateText(adapter, lines(shell('T1', 'rm -rf /important'), shell('T1', 'echo harmless'), toolResult('T1', { is_error: false, content: 'harmless' })));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'run_shell_command' },
      { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'run_shell_command' },
    ]);
  });
});
