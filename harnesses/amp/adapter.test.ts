// Amp cannot run here (vendor backend only): the fixtures are BUILT FROM DOCUMENTED SHAPES (the vendor's sample
// lines at ampcode.com/news/streaming-json, tool lines in the Claude-compatible shape it promises), not recorded.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import ampAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { AMP_TOOL_KINDS, ampToolKind } from './map-amp-tools.ts';

const manifest = getHarness('amp').manifest;
const adapter = ampAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const SID = 'T-2775dc92-90ed-4f85-8b73-8f9766029e83';
const W = '/scratch/work-amp';

describe('amp adapter: documented sample lines (built from documented shapes, not recorded)', () => {
  it('maps a documented session to the right events, with 0 unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('amp-documented-session.jsonl'));
    expect(events.every((e) => (e as { session_id?: string }).session_id === SID)).toBe(true);
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'List the files first.' },
      { type: 'agent', message: 'Let me look.' },
      { type: 'command', command: 'ls -la', is_success: true, tool_name: 'Bash' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 3, is_success: true, tool_name: 'Read' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'edit_file' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'toolu_04', subagent_name: 'Task' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'toolu_04', subagent_name: 'Task', is_success: true },
      { type: 'command', command: 'exit 3', is_success: false, tool_name: 'Bash' },
      { type: 'agent', message: '2 + 2 equals 4.' },
    ]);
    expect(summary.result).toMatchObject({
      session_id: SID,
      is_error: false,
      final_text: '2 + 2 equals 4.',
      reported_cost_usd: null,
      // 5 x (1200 incl. 300 read + 50 write -> 850 uncached) + the vendor line (12783 - 12416 - 367 = 0).
      tokens: { input: 4250, output: 408, cache_read: 13916, cache_write: 617, reasoning: null },
    });
    expect(summary.result.raw_usage).toHaveLength(6);
  });

  it('a home-relative init cwd (as in the vendor sample) does not replace the known workdir', () => {
    const text = [
      JSON.stringify({ type: 'system', subtype: 'init', cwd: '~/dev/labs', session_id: 'T-1' }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { path: 'a.ts' } }] } }),
      JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x', is_error: false }] } }),
    ].join('\n');
    expect(strip(translateText(adapter, text, { workdir: '/w' }).events)).toEqual([{ type: 'read', path: '/w/a.ts', is_success: true, tool_name: 'Read' }]);
  });

  it('a documented error result is one error event', () => {
    const { events, summary } = translateFixture(adapter, fixture('amp-documented-error.jsonl'));
    expect(strip(events)).toEqual([{ type: 'error', message: 'Out of credits', code: 'error_during_execution' }]);
    expect(summary.result).toMatchObject({ is_error: true, tokens: null, raw_usage: null });
  });
});

describe('amp adapter: every tool name has a mapping', () => {
  const session = (name: string, input: object, isError = false) =>
    [
      { type: 'system', subtype: 'init', cwd: '/w', session_id: 'T-1' },
      { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name, input }] }, session_id: 'T-1' },
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok', is_error: isError }] }, session_id: 'T-1' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');

  const mapped: [string, object, object][] = [
    ['Bash', { cmd: 'cat a', cwd: 'sub' }, { type: 'command', command: 'cat a', working_directory: '/w/sub', is_success: true, tool_name: 'Bash' }],
    ['Read', { path: 'a.ts' }, { type: 'read', path: '/w/a.ts', is_success: true, tool_name: 'Read' }],
    ['create_file', { path: 'b.ts', content: 'x' }, { type: 'write', path: '/w/b.ts', is_success: true, tool_name: 'create_file' }],
    ['edit_file', { path: '/w/b.ts', old_str: 'a', new_str: 'b' }, { type: 'write', path: '/w/b.ts', is_success: true, tool_name: 'edit_file' }],
    ['undo_edit', { path: 'b.ts' }, { type: 'write', path: '/w/b.ts', is_success: true, tool_name: 'undo_edit' }],
    ['Grep', { pattern: 'foo', path: 'src' }, { type: 'search', query: 'foo', path: '/w/src', is_success: true, tool_name: 'Grep' }],
    ['glob', { filePattern: '**/*.ts' }, { type: 'search', query: '**/*.ts', is_success: true, tool_name: 'glob' }],
    ['finder', { query: 'where is auth' }, { type: 'search', query: 'where is auth', is_success: true, tool_name: 'finder' }],
    ['list_directory', { path: 'src' }, { type: 'list', path: '/w/src', is_success: true, tool_name: 'list_directory' }],
  ];
  it.each(mapped)('%s', (name, input, expected) => {
    expect(strip(translateText(adapter, session(name, input)).events)).toEqual([expected]);
  });

  const subagents = ['Task', 'oracle', 'librarian', 'handoff'];
  it.each(subagents)('%s brackets a subagent', (name) => {
    expect(strip(translateText(adapter, session(name, { prompt: 'p' }, true)).events)).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: 't1', subagent_name: name },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 't1', subagent_name: name, is_success: false },
    ]);
  });

  const other = ['skill', 'find_thread', 'look_at', 'mermaid', 'painter', 'read_mcp_resource', 'read_thread', 'read_web_page', 'task_list', 'web_search'];
  it.each([...other, 'tb__deploy', 'mcp__github__issue'])('%s has no event type (or no readable path): unknown with both blocks', (name) => {
    const { events } = translateText(adapter, session(name, { x: 1 }));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { tool_use: { type: 'tool_use', id: 't1', name, input: { x: 1 } }, tool_result: { type: 'tool_result', tool_use_id: 't1', content: 'ok', is_error: false } } },
    ]);
  });

  it('the tables above cover every name in the init tool list and the adapter table', () => {
    expect([...mapped.map((m) => m[0]), ...subagents, ...other].sort()).toEqual(Object.keys(AMP_TOOL_KINDS).sort());
    expect(ampToolKind('tb__deploy')).toBe('other');
  });

  it('a call missing its expected argument is unknown, never a guessed value', () => {
    expect(translateText(adapter, session('Grep', { query: 'foo' })).events.map((e) => e.type)).toEqual(['unknown']);
    expect(translateText(adapter, session('Bash', { script: 'ls' })).events.map((e) => e.type)).toEqual(['unknown']);
  });
});

describe('amp adapter: usage', () => {
  const assistant = (usage: object, id?: string) => JSON.stringify({ type: 'assistant', message: { id, content: [], usage }, session_id: 'T-1' });
  const end = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 'T-1' });
  it('subtracts both cache classes from the inclusive input and counts a repeated message id once', () => {
    const u = { input_tokens: 1000, cache_read_input_tokens: 600, cache_creation_input_tokens: 100, output_tokens: 40 };
    const { summary } = translateText(adapter, [assistant(u, 'm1'), assistant(u, 'm1'), assistant(u, 'm2'), end].join('\n'));
    expect(summary.result.tokens).toEqual({ input: 600, output: 80, cache_read: 1200, cache_write: 200, reasoning: null });
  });

  it('never goes below zero; leaves tokens null without usage; an empty usage is unreadable, not 0', () => {
    const { summary } = translateText(adapter, [assistant({ input_tokens: 10, cache_read_input_tokens: 20, output_tokens: 1 }), end].join('\n'));
    expect(summary.result.tokens).toEqual({ input: 0, output: 1, cache_read: 20, cache_write: 0, reasoning: null });
    const noUsage = JSON.stringify({ type: 'assistant', message: { content: [] }, session_id: 'T-1' });
    expect(translateText(adapter, [noUsage, end].join('\n')).summary.result.tokens).toBeNull();
    const empty = translateText(adapter, [assistant({}), end].join('\n'));
    expect(empty.summary.result.tokens).toEqual({ input: null, output: null, cache_read: 0, cache_write: 0, reasoning: null });
    expect(empty.events.map((e) => e.type)).toEqual(['warning']);
  });
});

describe('amp adapter: damaged and unexpected input', () => {
  it('flushes a tool call that never got a result, without an outcome', () => {
    const text = [
      JSON.stringify({ type: 'system', subtype: 'init', cwd: '/w', session_id: 'T-1' }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't9', name: 'Bash', input: { cmd: 'sleep 100' } }] }, session_id: 'T-1' }),
    ].join('\n');
    const { events } = translateText(adapter, text, { exitCode: 137 });
    expect(strip(events)[0]).toEqual({ type: 'command', command: 'sleep 100', tool_name: 'Bash' });
    expect(events.at(-1)?.type).toBe('error');
  });

  it('turns garbage, unknown records and unreadable fields into unknown and keeps going', () => {
    const text = [
      'No API key found. Starting login flow...',
      '{"type":"assistant","message":{"content":[{"type":"text","te',
      '{"type":"brand_new_record","x":1}',
      '{"type":"system","subtype":"brand_new_subtype"}',
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash"}]}}',
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"still here"}]}}',
    ].join('\n');
    const { events } = translateText(adapter, text);
    // The result no call claims is held for a late call, and reported unpaired at the end.
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'agent', 'unknown']);
  });

  it('never stamps a session id the harness did not report', () => {
    const { events } = translateText(adapter, '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}');
    expect(events[0]).not.toHaveProperty('session_id');
  });
});

describe('amp invocation', () => {
  it('runs execute mode with stream-json, thinking, auto-approval and the model as the mode', () => {
    const inv = adapter.invocation({ model: 'smart', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['amp', '--mode', 'smart', '--dangerously-allow-all', '--execute', 'fix it', '--stream-json', '--stream-json-thinking']);
    expect(inv.stdin).toBe('close');
    expect(inv.files).toHaveLength(1);
    expect(inv.files[0]!.path).toBe('.config/amp/settings.json');
    expect(JSON.parse(inv.files[0]!.content)).toEqual({ 'amp.updates.mode': 'disabled', 'amp.dangerouslyAllowAll': true });
  });

  it('continues a thread to resume', () => {
    const inv = adapter.invocation({ model: 'smart', prompt: 'again', workdir: '/w', home: '/h', resumeSessionId: 'T-1' });
    expect(inv.argv.slice(0, 6)).toEqual(['amp', 'threads', 'continue', 'T-1', '--dangerously-allow-all', '--execute']);
  });

  it('declares the native binary path and no stub wire', () => {
    expect(manifest.install?.bin_path).toBe('lib/node_modules/@ampcode/cli/node_modules/@ampcode/cli-linux-x64/amp');
    expect(manifest.stub_wire).toBeUndefined();
    expect(manifest.offline_note).toMatch(/cannot run against the stub/);
  });
});

describe('amp adapter: hostile records (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const use = (id: string, cmd: string) => ({ type: 'tool_use', id, name: 'Bash', input: { cmd } });
  const assistantWith = (...content: object[]) => ({ type: 'assistant', message: { content }, session_id: 'T-1' });
  const resultBlock = (id: string, is_error: unknown = false) => ({ type: 'tool_result', tool_use_id: id, content: 'x', is_error });
  const userWith = (...content: object[]) => ({ type: 'user', message: { content }, session_id: 'T-1' });

  it.each([
    ['a string is_error', 'true'],
    ['a numeric is_error', 42],
    ['a null is_error', null],
  ])('finding 7: a tool_result with %s is unknown, never a success; the call stays reported without outcome', (_, isError) => {
    const bad = resultBlock('t1', isError);
    const { events } = translateText(adapter, lines(assistantWith(use('t1', 'rm -rf x')), userWith(bad)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: bad }, { type: 'command', command: 'rm -rf x', tool_name: 'Bash' }]);
  });

  it.each([
    ['a string is_error', { type: 'result', subtype: 'success', is_error: 'false', result: 'ok' }],
    ['a missing is_error', { type: 'result', subtype: 'success', result: 'ok' }],
  ])('finding 7: a result with %s is unknown and no verdict', (_, record) => {
    const { events, summary } = translateText(adapter, lines(record));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: record }]);
    expect(summary.result.is_error).toBeUndefined();
  });

  it.each([
    ['a read range of strings', { type: 'tool_use', id: 'r', name: 'Read', input: { path: '/w/a', read_range: ['1', '3'] } }],
    ['a numeric Bash cwd', { type: 'tool_use', id: 'r', name: 'Bash', input: { cmd: 'ls', cwd: 5 } }],
    ['a tool named like an Object property', { type: 'tool_use', id: 'r', name: 'toString', input: {} }],
  ])('finding 7: a call with %s is unknown with the call and its result', (_, block) => {
    const done = resultBlock('r');
    const { events } = translateText(adapter, lines(assistantWith(block), userWith(done)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { tool_use: block, tool_result: done } }]);
  });

  it('a tool_use with a numeric name is unknown, and the result it cannot claim is reported too', () => {
    const block = { type: 'tool_use', id: 'r', name: 5, input: {} };
    const done = resultBlock('r');
    expect(strip(translateText(adapter, lines(assistantWith(block), userWith(done))).events)).toEqual([{ type: 'unknown', raw: block }, { type: 'unknown', raw: done }]);
  });

  it.each([
    // Sums over a good message {input 1200, output 80} and a bad one.
    ['a string count', { input_tokens: '1200', output_tokens: 80 }, 'input_tokens', { input: null, output: 160, cache_read: 0, cache_write: 0, reasoning: null }],
    ['a float cache count', { input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 1.5 }, 'cache_read_input_tokens', { input: null, output: 160, cache_read: null, cache_write: 0, reasoning: null }],
    ['a null output count', { input_tokens: 1200, output_tokens: null }, 'output_tokens', { input: 2400, output: null, cache_read: 0, cache_write: 0, reasoning: null }],
  ])('finding 7: a message usage with %s makes its classes null for the session, with a warning', (_, bad, field, tokens) => {
    const good = { type: 'assistant', message: { id: 'm1', content: [], usage: { input_tokens: 1200, output_tokens: 80 } }, session_id: 'T-1' };
    const end = { type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 'T-1' };
    const { events, summary } = translateText(adapter, lines(good, { type: 'assistant', message: { id: 'm2', content: [], usage: bad }, session_id: 'T-1' }, end));
    expect(summary.result.tokens).toEqual(tokens);
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`assistant.message.usage.${field} `) }]);
  });

  it('finding 7: a session cut before its result (killed, timed out) has unknown usage, not the smaller sum of the messages seen', () => {
    const message = (id: string) => ({ type: 'assistant', message: { id, content: [], usage: { input_tokens: 1200, output_tokens: 80 } }, session_id: 'T-1' });
    const cut = translateText(adapter, lines(message('m1'), message('m2')));
    expect(cut.summary.result.tokens).toBeNull();
    expect(cut.summary.result.raw_usage).toHaveLength(2);
    expect(strip(cut.events)).toEqual([{ type: 'warning', code: 'incomplete_usage', message: expect.stringContaining('2 message(s)') }]);
    const whole = translateText(adapter, lines(message('m1'), message('m2'), { type: 'result', subtype: 'success', is_error: false, result: 'ok' }));
    expect(whole.summary.result.tokens).toEqual({ input: 2400, output: 160, cache_read: 0, cache_write: 0, reasoning: null });
  });

  it.each([
    [
      'a second tool_use with a pending id flushes the first without outcome',
      [assistantWith(use('T1', 'rm -rf /important')), assistantWith(use('T1', 'echo harmless')), userWith(resultBlock('T1'))],
      [{ type: 'command', command: 'rm -rf /important', tool_name: 'Bash' }, { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'Bash' }],
    ],
    [
      'a result before its call is held and paired once',
      [userWith(resultBlock('a')), assistantWith(use('a', 'ls'))],
      [{ type: 'command', command: 'ls', is_success: true, tool_name: 'Bash' }],
    ],
    [
      'a message printed again, before or after the result, is one call',
      [assistantWith(use('a', 'ls')), assistantWith(use('a', 'ls')), userWith(resultBlock('a')), assistantWith(use('a', 'ls'))],
      [{ type: 'command', command: 'ls', is_success: true, tool_name: 'Bash' }],
    ],
  ])('finding 9: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });
});
