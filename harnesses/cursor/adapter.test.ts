// Cursor cannot run here (curl installer, vendor backend): every fixture below is BUILT FROM DOCUMENTED SHAPES
// (cursor.com output-format doc + lines captured from a real run by ZhengyiLuo/AgentsServer), not recorded here.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import cursorAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { CURSOR_TOOL_KINDS, cursorToolKind } from './map-cursor-tools.ts';

const manifest = getHarness('cursor').manifest;
const adapter = cursorAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const SID = '00000000-0000-4000-8000-000000000001';
const W = '/scratch/work-cursor';

describe('cursor adapter: documented sample lines (built from documented shapes, not recorded)', () => {
  it('maps a documented session to the right events, with 0 unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('cursor-documented-session.jsonl'));
    expect(events.every((e) => (e as { session_id?: string }).session_id === SID)).toBe(true);
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'Reading hello.py to see what it prints.' },
      { type: 'agent', message: 'Let me find the file.' },
      { type: 'search', query: '**/hello.py', path: W, is_success: true, tool_name: 'globToolCall' },
      { type: 'read', path: `${W}/hello.py`, is_success: true, tool_name: 'readToolCall' },
      { type: 'write', path: `${W}/hello.py`, is_success: true, tool_name: 'editToolCall' },
      { type: 'write', path: `${W}/summary.txt`, is_success: true, tool_name: 'writeToolCall' },
      { type: 'command', command: 'python3 hello.py', working_directory: W, is_success: false, tool_name: 'shellToolCall' },
      { type: 'command', command: `python3 ${W}/hello.py`, exit_code: 0, is_success: true, tool_name: 'shellToolCall' },
      { type: 'command', command: 'false', exit_code: 7, is_success: false, tool_name: 'shellToolCall' },
      { type: 'agent', message: 'It prints `hello world`.' },
    ]);
    expect(summary.result).toEqual({
      session_id: SID,
      reported_model: 'Auto',
      is_error: false,
      final_text: 'It prints `hello world`.',
      reported_cost_usd: null,
      raw_usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 10, cacheWriteTokens: 3 },
      tokens: { input: 5, output: 2, cache_read: 10, cache_write: 3, reasoning: null },
    });
  });

  it('a documented error result is one error event and an error verdict', () => {
    const { events, summary } = translateFixture(adapter, fixture('cursor-documented-error.jsonl'));
    expect(strip(events)).toEqual([{ type: 'error', message: 'denied', code: 'error' }]);
    expect(summary.result).toMatchObject({ is_error: true, tokens: null, raw_usage: null, final_text: 'denied' });
  });

  it('documented retry/connection/interaction records become warnings; task_notification stays unknown', () => {
    const { events } = translateFixture(adapter, fixture('cursor-documented-transport.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'warning', message: 'Cursor retry starting (attempt 2)', code: 'retry/starting' },
      { type: 'warning', message: 'Cursor retry resuming (attempt 3)', code: 'retry/resuming' },
      { type: 'warning', message: 'Cursor connection reconnecting (attempt 4)', code: 'connection/reconnecting' },
      { type: 'warning', message: 'Cursor asked for permission (interaction_query)', code: 'interaction_query' },
      { type: 'warning', message: '2 background shell command(s) aborted after 60000 ms', code: 'background_shell_timeout' },
      { type: 'unknown', raw: { type: 'system', subtype: 'task_notification', session_id: SID, task_id: 'task-1', title: 'Background task', detail: 'finished' } },
    ]);
  });
});

describe('cursor adapter: every tool key has a mapping', () => {
  const completed = (key: string, args: object, result: object = { success: {} }) =>
    [
      { type: 'system', subtype: 'init', cwd: '/w', session_id: 's1', model: 'Auto' },
      { type: 'tool_call', subtype: 'completed', call_id: 'c1', tool_call: { [key]: { args, result } }, session_id: 's1' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');

  const mapped: [string, object, object][] = [
    ['shellToolCall', { command: 'ls' }, { type: 'command', command: 'ls', is_success: true, tool_name: 'shellToolCall' }],
    ['readToolCall', { path: 'a.ts' }, { type: 'read', path: '/w/a.ts', is_success: true, tool_name: 'readToolCall' }],
    ['writeToolCall', { path: '/w/b.ts' }, { type: 'write', path: '/w/b.ts', is_success: true, tool_name: 'writeToolCall' }],
    ['editToolCall', { path: 'b.ts' }, { type: 'write', path: '/w/b.ts', is_success: true, tool_name: 'editToolCall' }],
    ['deleteToolCall', { path: 'c.ts' }, { type: 'write', path: '/w/c.ts', is_success: true, tool_name: 'deleteToolCall' }],
    ['grepToolCall', { pattern: 'foo', path: 'src' }, { type: 'search', query: 'foo', path: '/w/src', is_success: true, tool_name: 'grepToolCall' }],
    ['globToolCall', { globPattern: '*.ts', targetDirectory: '/w' }, { type: 'search', query: '*.ts', path: '/w', is_success: true, tool_name: 'globToolCall' }],
    ['semSearchToolCall', { query: 'where is auth' }, { type: 'search', query: 'where is auth', is_success: true, tool_name: 'semSearchToolCall' }],
    ['lsToolCall', { path: 'src' }, { type: 'list', path: '/w/src', is_success: true, tool_name: 'lsToolCall' }],
  ];
  it.each(mapped)('%s', (key, args, expected) => {
    expect(strip(translateText(adapter, completed(key, args)).events)).toEqual([expected]);
  });

  const other = ['mcpToolCall', 'awaitToolCall', 'askQuestionToolCall', 'prManagementToolCall', 'recordScreenToolCall'];
  it.each(other)('%s has no event type: unknown with the raw record', (key) => {
    expect(cursorToolKind(key)).toBe('other');
    const { events } = translateText(adapter, completed(key, { x: 1 }));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { type: 'tool_call', subtype: 'completed', call_id: 'c1', tool_call: { [key]: { args: { x: 1 }, result: { success: {} } } }, session_id: 's1' } }]);
  });

  it('the tables above cover every key the adapter knows', () => {
    expect([...mapped.map((m) => m[0]), ...other].sort()).toEqual(Object.keys(CURSOR_TOOL_KINDS).sort());
  });

  it.each(['failure', 'rejected', 'timeout', 'fileNotFound', 'permissionDenied'])('outcome %s is a failure', (outcome) => {
    const { events } = translateText(adapter, completed('readToolCall', { path: 'a' }, { [outcome]: {} }));
    expect(strip(events)).toEqual([{ type: 'read', path: '/w/a', is_success: false, tool_name: 'readToolCall' }]);
  });

  it('an unknown outcome key, or two outcomes at once, is unknown rather than a guessed verdict', () => {
    for (const result of [{ futureOutcome: {} }, { success: {}, timeout: {} }, {}]) {
      expect(translateText(adapter, completed('readToolCall', { path: 'a' }, result)).events.map((e) => e.type)).toEqual(['unknown']);
    }
  });

  it('a search tool missing its documented argument is unknown', () => {
    expect(translateText(adapter, completed('globToolCall', { pattern: '*.ts' })).events.map((e) => e.type)).toEqual(['unknown']);
  });
});

describe('cursor adapter: usage', () => {
  const result = (usage: object) => JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 's', usage });
  it.each([
    // inputTokens is already uncached (disjoint from cacheReadTokens): no subtraction.
    [{ inputTokens: 14948, outputTokens: 103 }, { input: 14948, output: 103, cache_read: 0, cache_write: 0, reasoning: null }],
    [{ inputTokens: 5, outputTokens: 2, cacheReadTokens: 10, cacheWriteTokens: 3 }, { input: 5, output: 2, cache_read: 10, cache_write: 3, reasoning: null }],
  ])('%j', (usage, tokens) => {
    const { summary } = translateText(adapter, result(usage));
    expect(summary.result.tokens).toEqual(tokens);
    expect(summary.result.raw_usage).toEqual(usage);
    expect(summary.result.reported_cost_usd).toBeNull();
  });

  it('a result without usage leaves tokens null', () => {
    expect(translateText(adapter, JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok' })).summary.result.tokens).toBeNull();
  });
});

describe('cursor adapter: damaged and unexpected input', () => {
  it('flushes a started call that never completed, without an outcome, and pending thinking', () => {
    const text = [
      JSON.stringify({ type: 'system', subtype: 'init', cwd: '/w', session_id: 's1', model: 'Auto' }),
      JSON.stringify({ type: 'thinking', subtype: 'delta', text: 'hmm', session_id: 's1' }),
      JSON.stringify({ type: 'tool_call', subtype: 'started', call_id: 'c9', tool_call: { shellToolCall: { args: { command: 'sleep 100' } } }, session_id: 's1' }),
    ].join('\n');
    const { events } = translateText(adapter, text, { exitCode: 137 });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'reasoning', message: 'hmm' },
      { type: 'command', command: 'sleep 100', tool_name: 'shellToolCall' },
    ]);
    expect(events.at(-1)?.type).toBe('error');
  });

  it('turns garbage, truncated JSON, unknown records and unreadable fields into unknown and keeps going', () => {
    const text = [
      'Error: not logged in',
      '{"type":"assistant","message":{"content":[{"type":"text","te',
      '{"type":"brand_new_record","x":1}',
      '{"type":"tool_call","subtype":"completed","tool_call":{"shellToolCall":{}}}',
      '{"type":"assistant","message":{}}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"still here"}]}}',
    ].join('\n');
    const { events } = translateText(adapter, text);
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'agent']);
    expect(strip(events)[0]).toEqual({ type: 'unknown', raw: 'Error: not logged in' });
  });

  it('never stamps a session id the harness did not report', () => {
    const { events } = translateText(adapter, '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}');
    expect(events[0]).not.toHaveProperty('session_id');
  });
});

describe('cursor invocation', () => {
  it('builds the print-mode stream-json command with model, auto-approval and the prompt last', () => {
    const inv = adapter.invocation({ model: 'gpt-5.3-codex-low', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['cursor-agent', '-p', '--output-format', 'stream-json', '--model', 'gpt-5.3-codex-low', '--trust', '--force', 'fix it']);
    expect(inv.stdin).toBe('close');
    expect(inv.env).toEqual({});
    const resumed = adapter.invocation({ model: 'auto', prompt: 'again', workdir: '/w', home: '/h', resumeSessionId: 's1' });
    expect(resumed.argv.slice(-3)).toEqual(['--resume', 's1', 'again']);
  });

  it('declares API-key auth only and no stub wire (it cannot run offline)', () => {
    expect(manifest.auth.modes).toEqual(['api-key']);
    expect(manifest.auth.api_key?.inject_as).toBe('CURSOR_API_KEY');
    expect(manifest.stub_wire).toBeUndefined();
    expect(manifest.offline_note).toMatch(/cannot be installed or run in this sandbox/);
  });
});

describe('cursor adapter: hostile records (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const shell = (subtype: string, id: string, command: string, result?: object) => ({ type: 'tool_call', subtype, call_id: id, tool_call: { shellToolCall: { args: { command }, ...(result ? { result } : {}) } } });
  const ok = (exitCode: unknown) => ({ success: { exitCode, stdout: '' } });

  it.each([
    ['a string exit code', ok('0')],
    ['a float exit code', ok(1.5)],
    ['a numeric working directory', { success: { exitCode: 0, workingDirectory: 7 } }],
  ])('finding 7: a completed call with %s is unknown with its records, never a success', (_, result) => {
    const started = shell('started', 'c', 'rm -rf x');
    const completed = shell('completed', 'c', 'rm -rf x', result);
    expect(strip(translateText(adapter, lines(started, completed)).events)).toEqual([{ type: 'unknown', raw: [started, completed] }]);
  });

  it.each([
    ['a string is_error', { type: 'result', subtype: 'success', is_error: 'false', result: 'ok' }],
    ['a null is_error', { type: 'result', subtype: 'error', is_error: null, result: 'denied' }],
  ])('finding 7: a result with %s is unknown and no verdict', (_, record) => {
    const { events, summary } = translateText(adapter, lines(record));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: record }]);
    expect(summary.result.is_error).toBeUndefined();
  });

  it.each([
    ['an assistant block without text', { type: 'assistant', message: { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 5 }] } }],
    ['a numeric session id', { type: 'assistant', session_id: 1, message: { content: 'hi' } }],
    ['a string attempt', { type: 'retry', subtype: 'starting', attempt: '2' }],
  ])('finding 7: %s is unknown', (_, record) => {
    expect(strip(translateText(adapter, lines(record)).events)).toEqual([{ type: 'unknown', raw: record }]);
  });

  it.each([
    ['a thinking delta without text', { type: 'thinking', subtype: 'delta', text: null }],
    ['a glob pattern that is a number', { type: 'tool_call', subtype: 'completed', call_id: 'g', tool_call: { globToolCall: { args: { globPattern: 5 }, result: { success: {} } } } }],
    ['a tool key named like an Object property', { type: 'tool_call', subtype: 'completed', call_id: 'k', tool_call: { constructor: { args: {}, result: { success: {} } } } }],
  ])('unknown before issue 19 too, kept so: %s is unknown', (_, record) => {
    expect(strip(translateText(adapter, lines(record)).events)).toEqual([{ type: 'unknown', raw: record }]);
  });

  it.each([
    ['a string count', { inputTokens: '5', outputTokens: 2, cacheReadTokens: 10 }, 'result.usage.inputTokens', { input: null, output: 2, cache_read: 10, cache_write: 0, reasoning: null }],
    ['a null cache count', { inputTokens: 5, outputTokens: 2, cacheReadTokens: null }, 'result.usage.cacheReadTokens', { input: 5, output: 2, cache_read: null, cache_write: 0, reasoning: null }],
    ['a usage that is no object', 'lots', 'result.usage', null],
  ])('finding 7: usage with %s: unreadable classes null, a warning names the field', (_, usage, field, tokens) => {
    const { events, summary } = translateText(adapter, lines({ type: 'result', subtype: 'success', is_error: false, result: 'ok', usage }));
    expect(summary.result.tokens).toEqual(tokens);
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`${field} `) }]);
  });

  it('finding 8: a float exit code never leaves the translator (the call is unknown, the event valid)', () => {
    const { events } = translateText(adapter, lines(shell('completed', 'c', 'false', { failure: { exitCode: 1.5 } })));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it.each([
    [
      'a second start with a pending call_id flushes the first without outcome',
      [shell('started', 'T1', 'rm -rf /important'), shell('started', 'T1', 'echo harmless'), shell('completed', 'T1', 'echo harmless', ok(0))],
      [{ type: 'command', command: 'rm -rf /important', tool_name: 'shellToolCall' }, { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true, tool_name: 'shellToolCall' }],
    ],
    [
      'a completion naming another command than its start does not hide the start',
      [shell('started', 'T1', 'rm -rf /important'), shell('completed', 'T1', 'echo harmless', ok(0))],
      [{ type: 'command', command: 'rm -rf /important', tool_name: 'shellToolCall' }, { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true, tool_name: 'shellToolCall' }],
    ],
    [
      'a start printed again after its completion is one call',
      [shell('started', 'a', 'ls'), shell('completed', 'a', 'ls', ok(0)), shell('started', 'a', 'ls')],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'shellToolCall' }],
    ],
    [
      'a completion before its start: reported once',
      [shell('completed', 'a', 'ls', ok(0)), shell('started', 'a', 'ls')],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'shellToolCall' }],
    ],
  ])('finding 9: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });

  it.each([
    [
      'a start printed twice is one call',
      [shell('started', 'a', 'ls'), shell('started', 'a', 'ls'), shell('completed', 'a', 'ls', ok(0))],
      [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'shellToolCall' }],
    ],
  ])('pairing that held before issue 19 too: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });
});
