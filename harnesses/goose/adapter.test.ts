// goose cannot be installed here (GitHub-release binary): the fixtures are BUILT FROM DOCUMENTED SHAPES (the serde
// types in the goose source), not recorded, and the mapping is UNVERIFIED by running.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import gooseAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { GOOSE_TOOL_KINDS, gooseToolKind } from './map-goose-tools.ts';

const manifest = getHarness('goose').manifest;
const adapter = gooseAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-goose';

describe('goose adapter: documented record shapes (built from the source serde types, not recorded)', () => {
  it('maps a session built from the documented records to the right events, with 0 unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('goose-documented-session.jsonl'), { workdir: W });
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'Look at the files first.' },
      { type: 'agent', message: 'Let me look.' },
      { type: 'command', command: 'ls -la', is_success: true, tool_name: 'shell' },
      { type: 'write', path: `${W}/notes.txt`, is_success: true, tool_name: 'write' },
      { type: 'write', path: `${W}/notes.txt`, is_success: true, tool_name: 'edit' },
      { type: 'list', path: W, is_success: true, tool_name: 'tree' },
      { type: 'command', command: 'exit 3', is_success: false, tool_name: 'shell' },
      { type: 'warning', message: 'Context compacted', code: 'inlineMessage' },
      { type: 'agent', message: 'All done.' },
    ]);
    expect(events.some((e) => 'session_id' in e)).toBe(false);
    expect(summary.result).toEqual({
      is_error: false,
      // goose's own estimate, surfaced as the harness's reported cost.
      reported_cost_usd: null, // goose's estimate is kept in raw_usage, never surfaced as a charge
      raw_usage: { total_tokens: 5080, input_tokens: 4800, output_tokens: 280, cache_read_input_tokens: 1200, cache_write_input_tokens: 200, cost_usd: 0.0123 },
      // input_tokens includes both cache classes: 4800 - 1200 - 200 = 3400.
      tokens: { input: 3400, output: 280, cache_read: 1200, cache_write: 200, reasoning: null },
    });
  });

  it('an error record is an error event; the streamed text before it is flushed first', () => {
    const { events, summary } = translateFixture(adapter, fixture('goose-documented-error.jsonl'), { exitCode: 1 });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'agent', message: 'Trying.' },
      { type: 'error', message: 'Request failed: Authentication failed (401)' },
    ]);
    expect(events.at(-1)?.type).toBe('error');
    expect(summary.result.tokens).toBeNull();
    expect(summary.result.is_error).toBe(true);
  });
});

describe('goose adapter: every tool name has a mapping', () => {
  const session = (name: string, args: object, isError = false) =>
    [
      { type: 'message', message: { id: 'a', role: 'assistant', content: [{ type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name, arguments: args } } }] } },
      { type: 'message', message: { id: 'u', role: 'user', content: [{ type: 'toolResponse', id: 't1', toolResult: { status: 'success', value: { content: [], isError } } }] } },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');

  const mapped: [string, object, object][] = [
    ['shell', { command: 'cat a' }, { type: 'command', command: 'cat a', is_success: true, tool_name: 'shell' }],
    ['write', { path: 'a.ts', content: 'x' }, { type: 'write', path: '/w/a.ts', is_success: true, tool_name: 'write' }],
    ['edit', { path: '/w/a.ts', before: 'a', after: 'b' }, { type: 'write', path: '/w/a.ts', is_success: true, tool_name: 'edit' }],
    ['tree', { path: 'src' }, { type: 'list', path: '/w/src', is_success: true, tool_name: 'tree' }],
    ['developer__shell', { command: 'ls' }, { type: 'command', command: 'ls', is_success: true, tool_name: 'developer__shell' }],
    ['developer__text_editor', { command: 'view', path: 'a.ts' }, { type: 'read', path: '/w/a.ts', is_success: true, tool_name: 'developer__text_editor' }],
  ];
  it.each(mapped)('%s', (name, args, expected) => {
    expect(strip(translateText(adapter, session(name, args), { workdir: '/w' }).events)).toEqual([expected]);
  });

  it.each(['write', 'str_replace', 'insert', 'undo_edit'])('developer__text_editor %s is a write', (command) => {
    const { events } = translateText(adapter, session('developer__text_editor', { command, path: 'a' }), { workdir: '/w' });
    expect(strip(events)).toEqual([{ type: 'write', path: '/w/a', is_success: true, tool_name: 'developer__text_editor' }]);
  });

  const other = ['web_fetch'];
  it.each([...other, 'computercontroller__screenshot', 'subagent__execute_task'])('%s has no event type: unknown with both items', (name) => {
    expect(gooseToolKind(name)).toBe('other');
    const { events } = translateText(adapter, session(name, { x: 1 }));
    expect(strip(events)).toEqual([
      {
        type: 'unknown',
        raw: {
          toolRequest: { type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name, arguments: { x: 1 } } } },
          toolResponse: { type: 'toolResponse', id: 't1', toolResult: { status: 'success', value: { content: [], isError: false } } },
        },
      },
    ]);
  });

  it('the tables above cover every tool the adapter knows', () => {
    expect([...mapped.map((m) => m[0]), ...other].sort()).toEqual(Object.keys(GOOSE_TOOL_KINDS).sort());
  });

  it('an isError result or an error status is a failure; a malformed request is unknown', () => {
    expect(strip(translateText(adapter, session('shell', { command: 'x' }, true)).events)).toEqual([{ type: 'command', command: 'x', is_success: false, tool_name: 'shell' }]);
    const errored = [
      JSON.stringify({ type: 'message', message: { id: 'a', role: 'assistant', content: [{ type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name: 'shell', arguments: { command: 'x' } } } }] } }),
      JSON.stringify({ type: 'message', message: { id: 'u', role: 'user', content: [{ type: 'toolResponse', id: 't1', toolResult: { status: 'error', error: 'boom' } }] } }),
    ].join('\n');
    expect(strip(translateText(adapter, errored).events)).toEqual([{ type: 'command', command: 'x', is_success: false, tool_name: 'shell' }]);
    const malformed = JSON.stringify({ type: 'message', message: { id: 'a', role: 'assistant', content: [{ type: 'toolRequest', id: 't1', toolCall: { status: 'error', error: 'bad json' } }] } });
    expect(translateText(adapter, malformed).events.map((e) => e.type)).toEqual(['unknown']);
  });
});

describe('goose adapter: usage', () => {
  it.each([
    [{ input_tokens: 1200, output_tokens: 80 }, { input: 1200, output: 80, cache_read: 0, cache_write: 0, reasoning: null }, null],
    [{ input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 300, cache_write_input_tokens: 50, cost_usd: 0.5 }, { input: 850, output: 80, cache_read: 300, cache_write: 50, reasoning: null }, 0.5],
  ])('%j', (complete, tokens, cost) => {
    const { summary } = translateText(adapter, JSON.stringify({ type: 'complete', total_tokens: 1, ...complete }));
    expect(summary.result.tokens).toEqual(tokens);
    expect(summary.result.reported_cost_usd).toBeNull();
    expect((summary.result.raw_usage as { cost_usd?: number }).cost_usd ?? null).toBe(cost);
  });

  it('a complete record without counts leaves tokens null', () => {
    expect(translateText(adapter, '{"type":"complete","total_tokens":null}').summary.result.tokens).toBeNull();
  });
});

describe('goose adapter: damaged and unexpected input', () => {
  it('flushes a tool call that never got a response, without an outcome', () => {
    const text = JSON.stringify({ type: 'message', message: { id: 'a', role: 'assistant', content: [{ type: 'toolRequest', id: 't9', toolCall: { status: 'success', value: { name: 'shell', arguments: { command: 'sleep 100' } } } }] } });
    const { events } = translateText(adapter, text, { exitCode: 137 });
    expect(strip(events)[0]).toEqual({ type: 'command', command: 'sleep 100', tool_name: 'shell' });
    expect(events.at(-1)?.type).toBe('error');
  });

  it('turns garbage, unknown records and unreadable fields into unknown and keeps going', () => {
    const text = [
      'starting session | provider: openrouter',
      '{"type":"message","message":{"role":"assistant","content":[{"type":"te',
      '{"type":"brand_new","x":1}',
      '{"type":"notification","extension_id":"x","brand_new":{}}',
      '{"type":"message","message":{"role":"system","content":[]}}',
      '{"type":"message","message":{"role":"assistant","content":[{"type":"image","data":"","mimeType":"image/png"}]}}',
      '{"type":"message","message":{"id":"z","role":"assistant","content":[{"type":"text","text":"still here"}]}}',
    ].join('\n');
    const { events } = translateText(adapter, text);
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'agent']);
  });
});

describe('goose invocation', () => {
  it('runs the prompt with stream-json, the developer tools, auto mode and the model in the environment', () => {
    const inv = adapter.invocation({ model: 'anthropic/claude-sonnet-4.5', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['goose', 'run', '--with-builtin', 'developer', '--output-format', 'stream-json', '--text', 'fix it']);
    expect(inv.env).toEqual({ GOOSE_PROVIDER: 'openrouter', GOOSE_MODE: 'auto', GOOSE_DISABLE_KEYRING: '1', GOOSE_MODEL: 'anthropic/claude-sonnet-4.5' });
    expect(inv.stdin).toBe('close');
  });

  it('installs with the official script into the prefix and declares no stub wire', () => {
    expect(manifest.install?.npm_package).toBeUndefined();
    expect(manifest.install?.command.join(' ')).toContain("GOOSE_BIN_DIR='{prefix}/bin'");
    expect(manifest.stub_wire).toBeUndefined();
    expect(manifest.offline_note).toMatch(/cannot be installed or run in this sandbox/);
  });
});

describe('goose adapter: hostile records (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const request = (id: string, command: string) => ({ type: 'toolRequest', id, toolCall: { status: 'success', value: { name: 'shell', arguments: { command } } } });
  const response = (id: string, value: object = { content: [], isError: false }) => ({ type: 'toolResponse', id, toolResult: { status: 'success', value } });
  const msg = (role: string, ...content: object[]) => ({ type: 'message', message: { id: `m-${role}`, role, content } });

  it.each([
    ['a string isError', { content: [], isError: 'true' }],
    ['a numeric isError', { content: [], isError: 1 }],
    ['a null isError', { content: [], isError: null }],
  ])('finding 7: a response with %s is unknown, never a success; the call stays reported without outcome', (_, value) => {
    const bad = response('t1', value);
    const { events } = translateText(adapter, lines(msg('assistant', request('t1', 'rm -rf x')), msg('user', bad)));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: bad }, { type: 'command', command: 'rm -rf x', tool_name: 'shell' }]);
  });

  it.each([
    // One unknown with request and response; an unreadable request leaves the response unclaimed (a second one).
    ['arguments that are a string', { type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name: 'shell', arguments: 'ls' } } }, 2],
  ])('finding 7: a request with %s is unknown, never a guessed operation', (_, item, unknowns) => {
    const { events } = translateText(adapter, lines(msg('assistant', item), msg('user', response('t1'))));
    expect(events.map((e) => e.type)).toEqual(Array(unknowns).fill('unknown'));
  });

  it.each([
    ['a numeric command', { type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name: 'shell', arguments: { command: 7 } } } }, 1],
    ['a text_editor command named like an Object property', { type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name: 'developer__text_editor', arguments: { command: 'constructor', path: '/w/a' } } } }, 1],
    ['a tool named like an Object property', { type: 'toolRequest', id: 't1', toolCall: { status: 'success', value: { name: 'constructor', arguments: {} } } }, 1],
  ])('unknown before issue 19 too, kept so: a request with %s is unknown', (_, item, unknowns) => {
    const { events } = translateText(adapter, lines(msg('assistant', item), msg('user', response('t1'))));
    expect(events.map((e) => e.type)).toEqual(Array(unknowns).fill('unknown'));
  });

  it.each([
    ['a string count', { input_tokens: '4800', output_tokens: 280 }, 'input_tokens', { input: null, output: 280, cache_read: 0, cache_write: 0, reasoning: null }],
    ['a fractional cache count', { input_tokens: 4800, output_tokens: 280, cache_read_input_tokens: 0.5 }, 'cache_read_input_tokens', { input: null, output: 280, cache_read: null, cache_write: 0, reasoning: null }],
    ['a negative output count', { input_tokens: 4800, output_tokens: -1 }, 'output_tokens', { input: 4800, output: null, cache_read: 0, cache_write: 0, reasoning: null }],
  ])('finding 7: a complete record with %s leaves those classes null and a warning names the field', (_, counts, field, tokens) => {
    const { events, summary } = translateText(adapter, lines({ type: 'complete', ...counts }));
    expect(summary.result.tokens).toEqual(tokens);
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`complete.${field} `) }]);
  });

  it.each([
    [
      'a second request with a pending id flushes the first without outcome',
      [msg('assistant', request('T1', 'rm -rf /important')), msg('assistant', request('T1', 'echo harmless')), msg('user', response('T1'))],
      [{ type: 'command', command: 'rm -rf /important', tool_name: 'shell' }, { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'shell' }],
    ],
    [
      'a response before its request is held and paired once',
      [msg('user', response('a')), msg('assistant', request('a', 'ls'))],
      [{ type: 'command', command: 'ls', is_success: true, tool_name: 'shell' }],
    ],
    [
      'a request printed again, before or after its response, is one call',
      [msg('assistant', request('a', 'ls')), msg('assistant', request('a', 'ls')), msg('user', response('a')), msg('assistant', request('a', 'ls'))],
      [{ type: 'command', command: 'ls', is_success: true, tool_name: 'shell' }],
    ],
  ])('finding 9: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });

  it.each([
    [
      'a response no request claims is reported at the end',
      [msg('user', response('z'))],
      [{ type: 'unknown', raw: response('z') }],
    ],
  ])('pairing: %s', (_, records, expected) => {
    expect(strip(translateText(adapter, lines(...records)).events)).toEqual(expected);
  });
});
