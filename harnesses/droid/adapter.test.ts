import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import droidAdapter from './adapter.ts';
import { droidToolKind } from './map-droid-tools.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('droid').manifest;
const adapter = droidAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-droid';

describe('droid adapter: recorded transcripts', () => {
  it('0.215.0 reference session: the doubled reasoning record counts once; exit codes and read ranges from their fixed texts', () => {
    const { events, summary } = translateFixture(adapter, fixture('droid-0.215.0-stream-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'Execute' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'Create' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'Read' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'Edit' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'Grep' },
      { type: 'search', query: '**/*.txt', path: W, is_success: true, tool_name: 'Glob' },
      { type: 'list', path: W, is_success: true, tool_name: 'LS' },
      { type: 'skill', path: '/scratch/h-droid/.factory/skills/demo/SKILL.md', skill_name: 'demo', is_success: true, tool_name: 'Skill' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'call_mock20', subagent_name: 'worker' },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 'call_mock20', subagent_name: 'worker', is_success: false },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Execute' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 11 calls x 900 non-cached input (input_tokens is already uncached here), 300 cache read, 80 output.
    expect(summary.result).toMatchObject({ session_id: 'c9e67fa9-7af1-4632-bed2-db7527289dcd', tokens: { input: 9900, output: 880, cache_read: 3300, cache_write: 0, reasoning: null }, reported_cost_usd: null });
  });

  it('recorded against the newest installable release: 0 unknown', () => {
    expect(translateFixture(adapter, fixture('droid-0.215.0-tools.jsonl')).events.filter((e) => e.type === 'unknown')).toEqual([]);
  });

  it('an API error is reported by both the agent loop and the CLI, each once', () => {
    const { events } = translateFixture(adapter, fixture('droid-0.215.0-error-400.jsonl'), { exitCode: 1 });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'error', message: '400 mock bad request', code: 'agent_loop' },
      { type: 'error', message: 'Exec failed', code: 'cli' },
    ]);
  });
});

describe('droid adapter: tools and invocation', () => {
  it.each([
    ['Execute', 'command'], ['Read', 'read'], ['Create', 'write'], ['Edit', 'write'], ['ApplyPatch', 'write'], ['Grep', 'search'], ['Glob', 'search'], ['LS', 'list'], ['Skill', 'skill'], ['Task', 'subagent'],
    ['TodoWrite', 'other'], ['FetchUrl', 'other'], ['WebSearch', 'other'], ['ProposeMission', 'other'], ['Script', 'other'], ['AskUser', 'other'],
  ])('%s -> %s', (tool, kind) => {
    expect(droidToolKind(tool)).toBe(kind);
  });

  it('a skill result without a file path is unknown, never a guessed path', () => {
    const { events } = translateText(adapter, [JSON.stringify({ type: 'tool_call', id: 'c', toolId: 'Skill', parameters: { skill: 'demo' } }), JSON.stringify({ type: 'tool_result', id: 'c', toolId: 'Skill', isError: false, value: 'Skill "demo" is now active.' })].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it('a base URL becomes a BYOK custom model whose key the driver fills in; the native binary is run directly', () => {
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9' });
    expect(inv.argv).toEqual(['droid', 'exec', '-o', 'stream-json', '--skip-permissions-unsafe', '-m', 'custom:mock-model', 'p']);
    const settings = JSON.parse(inv.files[0]!.content);
    expect(settings.customModels[0]).toMatchObject({ model: 'mock-model', baseUrl: 'http://127.0.0.1:9/v1', apiKey: API_KEY_PLACEHOLDER, provider: 'generic-chat-completion-api' });
    expect(manifest.install).toMatchObject({ npm_package: 'droid', platform_package: '@factory/cli-linux-x64', bin_path: 'lib/node_modules/@factory/cli-linux-x64/bin/droid' });
  });
});

describe('droid adapter: hostile records (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const call = (id: string, command: string) => ({ type: 'tool_call', id, toolId: 'Execute', toolName: 'Execute', parameters: { command } });
  const result = (id: string, isError: unknown, value = 'out\n[Process exited with code 0]') => ({ type: 'tool_result', id, toolId: 'Execute', isError, value });

  it.each([
    ['a string isError', 'true'],
    ['a numeric isError', 42],
    ['a null isError', null],
  ])('finding 7: a result with %s is unknown, never a success', (_, isError) => {
    const bad = result('c', isError);
    const { events } = translateText(adapter, lines(call('c', 'rm -rf x'), bad));
    // The call is reported without an outcome at the end; the unreadable result as it came.
    expect(strip(events)).toEqual([{ type: 'unknown', raw: bad }, { type: 'command', command: 'rm -rf x', tool_name: 'Execute' }]);
  });

  it.each([
    ['glob patterns holding a number', { type: 'tool_call', id: 'c', toolId: 'Glob', parameters: { patterns: ['*.ts', 7] } }],
  ])('finding 7: a call with %s is unknown with the raw call and result', (_, bad) => {
    const done = result('c', false);
    const { events } = translateText(adapter, lines(bad, done));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { tool_call: bad, tool_result: done } }]);
  });

  it.each([
    ['a numeric command', { type: 'tool_call', id: 'c', toolId: 'Execute', parameters: { command: 7 } }],
    ['a numeric read path', { type: 'tool_call', id: 'c', toolId: 'Read', parameters: { file_path: 7 } }],
    ['a tool named like an Object property', { type: 'tool_call', id: 'c', toolId: 'constructor', parameters: {} }],
  ])('unknown before issue 19 too, kept so: a call with %s is unknown with the raw call and result', (_, bad) => {
    const done = result('c', false);
    const { events } = translateText(adapter, lines(bad, done));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { tool_call: bad, tool_result: done } }]);
  });

  it.each([
    ['a reasoning record with a numeric id', { type: 'reasoning', id: 3, text: 'hm' }],
    ['a numeric session id', { type: 'message', role: 'assistant', text: 'hi', session_id: 9 }],
  ])('finding 7: %s is unknown', (_, bad) => {
    expect(strip(translateText(adapter, lines(bad)).events)).toEqual([{ type: 'unknown', raw: bad }]);
  });

  it.each([
    ['a message without text', { type: 'message', role: 'assistant', text: 5 }],
    ['an error with a numeric message', { type: 'error', source: 'cli', message: 400 }],
  ])('unknown before issue 19 too, kept so: %s is unknown', (_, bad) => {
    expect(strip(translateText(adapter, lines(bad)).events)).toEqual([{ type: 'unknown', raw: bad }]);
  });

  it.each([
    ['a string count', 'input_tokens', '9900', { input: null, output: 880, cache_read: 3300, cache_write: 0, reasoning: null }],
    ['a null count', 'cache_read_input_tokens', null, { input: 9900, output: 880, cache_read: null, cache_write: 0, reasoning: null }],
    ['a missing count', 'output_tokens', undefined, { input: 9900, output: null, cache_read: 3300, cache_write: 0, reasoning: null }],
  ])('finding 7: completion usage with %s leaves that class null and a warning names it', (_, field, value, tokens) => {
    const usage = { input_tokens: 9900, output_tokens: 880, cache_read_input_tokens: 3300, cache_creation_input_tokens: 0, [field]: value };
    const { events, summary } = translateText(adapter, lines({ type: 'completion', finalText: 'ok', usage }));
    expect(summary.result.tokens).toEqual(tokens);
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`completion.usage.${field} `) }]);
  });

  it('finding 8: an exit code too large to be an integer is left out, the command kept', () => {
    const { events } = translateText(adapter, lines(call('c', 'x'), result('c', true, '[Process exited with code 99999999999999999999]')));
    expect(strip(events)).toEqual([{ type: 'command', command: 'x', is_success: false, tool_name: 'Execute' }]);
  });

  it.each([
    [
      'a second call with a pending id flushes the first without outcome',
      [call('T1', 'rm -rf /important'), call('T1', 'echo harmless'), result('T1', false)],
      [{ type: 'command', command: 'rm -rf /important', tool_name: 'Execute' }, { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true, tool_name: 'Execute' }],
    ],
    [
      'a call printed again after its result is one call',
      [call('a', 'ls'), result('a', false), call('a', 'ls')],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'Execute' }],
    ],
    [
      'a result before its call is held and paired once',
      [result('a', false), call('a', 'ls')],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'Execute' }],
    ],
  ])('finding 9: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });

  it.each([
    [
      'a call printed twice while pending is one call',
      [call('a', 'ls'), call('a', 'ls'), result('a', false)],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'Execute' }],
    ],
    [
      'a result no call claims is reported at the end',
      [result('z', false)],
      [{ type: 'unknown', raw: result('z', false) }],
    ],
  ])('pairing that held before issue 19 too: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });
});
