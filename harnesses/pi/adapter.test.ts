import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import piAdapter, { MODELS_FILE } from './adapter.ts';
import { piToolKind } from './map-pi-tools.ts';
import { addMessageUsage, emptyTotals, piTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = piAdapter(getHarness('pi').manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => join(fixtures, name);
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
const W = '/w';

// Records in Pi 0.73.1's shapes (fixtures/pi-0.73.1-mode-json.jsonl).
const header = { type: 'session', version: 3, id: 'sess-1', timestamp: '2026-12-06T05:06:48.247Z', cwd: W };
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0, total = 0.001) => ({
  input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
});
const assistant = (content: object[], stopReason = 'toolUse', extra: object = {}) => ({
  type: 'message_end',
  message: { role: 'assistant', content, api: 'openai-completions', provider: 'openrouter', model: 'mock-model', usage: usage(100, 10), stopReason, timestamp: 1, ...extra },
});
const toolCall = (id: string, name: string, args: object) => ({ type: 'toolCall', id, name, arguments: args });
const start = (id: string, name: string, args: object) => ({ type: 'tool_execution_start', toolCallId: id, toolName: name, args });
const end = (id: string, name: string, text: string, isError = false) => ({ type: 'tool_execution_end', toolCallId: id, toolName: name, result: { content: [{ type: 'text', text }] }, isError });
/** One whole call as Pi prints it: announced, started, ended. */
const call = (id: string, name: string, args: object, text: string, isError = false) => [assistant([toolCall(id, name, args)]), start(id, name, args), end(id, name, text, isError)];
const agentEnd = { type: 'agent_end', messages: [] };

describe('pi adapter: recorded transcripts', () => {
  it('0.73.1 reference sample: the command, the answer, usage summed over both model calls, Pi’s cost', () => {
    const { events, summary } = translateFixture(adapter, fixture('pi-0.73.1-mode-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'echo hi-from-stub', is_success: true, tool_name: 'bash' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    expect(new Set(events.map((e) => (e as { session_id?: string }).session_id))).toEqual(new Set(['01a249bf-5f36-7309-a077-891ed3fbd048']));
    // Two calls of {input 100 (uncached), output 15, cacheRead 20, cacheWrite 0, cost.total 0.000531}.
    expect(summary.result).toMatchObject({
      session_id: '01a249bf-5f36-7309-a077-891ed3fbd048',
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: 0, reasoning: null },
      reported_model: 'stub-model',
      is_error: false,
      final_text: 'Stub says: done.',
    });
    // Pi's cost is its price table's estimate (for an unknown model id, another model's rates): raw usage only.
    expect(summary.result.reported_cost_usd).toBeNull();
    expect((summary.result.raw_usage as { estimated_cost_usd: number }).estimated_cost_usd).toBeCloseTo(0.001062, 12);
  });

  // Recorded by `tcab harnesses verify pi --record` against the newest release.
  const recorded = existsSync(fixtures) ? readdirSync(fixtures) : [];
  const tools = recorded.find((f) => /^pi-.*-tools\.jsonl$/.test(f));
  const apiError = recorded.find((f) => /^pi-.*-api-error\.jsonl$/.test(f));

  it.runIf(tools)('newest release, tools scenario: every record mapped, the failed command’s exit code from Pi’s status line', () => {
    const { events, summary } = translateFixture(adapter, fixture(tools!));
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    const kinds = strip(events).map((e) => `${e.type}${e.tool_name ? `:${e.tool_name}` : ''}`);
    expect(kinds).toEqual(['reasoning', 'agent', 'command:bash', 'write:write', 'read:read', 'write:edit', 'command:bash', 'agent']);
    expect(strip(events).filter((e) => e.type === 'command').map((e) => [e.command, e.exit_code, e.is_success])).toEqual([
      ['ls -la && echo hi', undefined, true],
      ['exit 3', 3, false],
    ]);
    expect(strip(events).find((e) => e.type === 'read')).toMatchObject({ start_line: 1, end_line: 2, is_success: true });
    // Six model calls of the stub's {900 uncached, 300 cache read, 80 output}; no cache write on the chat wire.
    expect(summary.result.tokens).toEqual({ input: 5400, output: 480, cache_read: 1800, cache_write: 0, reasoning: null });
    expect(summary.result).toMatchObject({ is_error: false, final_text: 'All done.', reported_model: 'mock-model' });
  });

  it.runIf(apiError)('newest release, HTTP 400: Pi exits 0, the failed message is an error and the session’s verdict', () => {
    const { events, summary } = translateFixture(adapter, fixture(apiError!));
    expect(strip(events).filter((e) => e.type !== 'warning')).toEqual([{ type: 'error', message: '400 mock bad request' }]);
    expect(summary.result.is_error).toBe(true);
  });
});

describe('pi adapter: tools', () => {
  it.each([
    ['bash', 'command'], ['read', 'read'], ['write', 'write'], ['edit', 'write'], ['grep', 'search'], ['find', 'search'], ['ls', 'list'],
    ['todo', 'other'], ['web_search', 'other'], ['Bash', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(piToolKind(name)).toBe(kind);
  });

  it.each([
    ['a command that exited 0', call('c', 'bash', { command: 'ls' }, 'a\nb\n'), { type: 'command', command: 'ls', is_success: true, tool_name: 'bash' }],
    ['a command that exited 3 (Pi’s own status line)', call('c', 'bash', { command: 'exit 3' }, '(no output)\n\nCommand exited with code 3', true), { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'bash' }],
    ['a command whose output ends like the status line but succeeded', call('c', 'bash', { command: 'cat log' }, 'Command exited with code 3', false), { type: 'command', command: 'cat log', is_success: true, tool_name: 'bash' }],
    ['a command that timed out', call('c', 'bash', { command: 'sleep 99', timeout: 1 }, 'Command timed out after 1 seconds', true), { type: 'command', command: 'sleep 99', is_success: false, tool_name: 'bash' }],
    ['a read of the whole file', call('c', 'read', { path: 'a.txt' }, 'hello\n'), { type: 'read', path: '/w/a.txt', is_success: true, tool_name: 'read' }],
    ['a read with offset and limit, more lines left', call('c', 'read', { path: 'a.txt', offset: 3, limit: 2 }, 'c\nd\n\n[4 more lines in file. Use offset=5 to continue.]'), { type: 'read', path: '/w/a.txt', start_line: 3, end_line: 4, is_success: true, tool_name: 'read' }],
    ['a read Pi truncated', call('c', 'read', { path: '/abs/b.txt' }, 'x\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]'), { type: 'read', path: '/abs/b.txt', start_line: 1, end_line: 2000, is_success: true, tool_name: 'read' }],
    ['a read past the end', call('c', 'read', { path: 'a.txt', offset: 99 }, 'Offset 99 is beyond end of file (3 lines total)', true), { type: 'read', path: '/w/a.txt', is_success: false, tool_name: 'read' }],
    ['a write', call('c', 'write', { path: 'n.txt', content: 'x' }, 'Successfully wrote 1 bytes to n.txt'), { type: 'write', path: '/w/n.txt', is_success: true, tool_name: 'write' }],
    ['an edit that failed', call('c', 'edit', { path: 'n.txt', edits: [{ oldText: 'q', newText: 'r' }] }, 'Could not find the exact text', true), { type: 'write', path: '/w/n.txt', is_success: false, tool_name: 'edit' }],
    ['a grep', call('c', 'grep', { pattern: 'TODO', path: 'src' }, 'src/a.ts:1: TODO'), { type: 'search', query: 'TODO', path: '/w/src', is_success: true, tool_name: 'grep' }],
    ['a find', call('c', 'find', { pattern: '**/*.ts' }, 'src/a.ts'), { type: 'search', query: '**/*.ts', is_success: true, tool_name: 'find' }],
    ['an ls', call('c', 'ls', {}, 'a.txt'), { type: 'list', is_success: true, tool_name: 'ls' }],
  ])('%s', (_label, records, event) => {
    expect(strip(translateText(adapter, lines(header, ...records, agentEnd)).events)).toEqual([event]);
  });

  it('a tool Pi has no event type for is unknown with its records, as is a call whose arguments fail their schema', () => {
    const custom = call('c1', 'todo', { items: [] }, 'ok');
    const badArgs = call('c2', 'bash', { command: 7 }, 'ok');
    const { events } = translateText(adapter, lines(header, ...custom, ...badArgs, agentEnd));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { toolCall: toolCall('c1', 'todo', { items: [] }), tool_execution_start: custom[1], tool_execution_end: custom[2] } },
      { type: 'unknown', raw: { toolCall: toolCall('c2', 'bash', { command: 7 }), tool_execution_start: badArgs[1], tool_execution_end: badArgs[2] } },
    ]);
  });

  it('a call announced but never started, and one started but never ended, are reported without an outcome', () => {
    const { events } = translateText(adapter, lines(header, assistant([toolCall('a', 'bash', { command: 'never ran' }), toolCall('b', 'write', { path: 'x' })]), start('b', 'write', { path: 'x' }), agentEnd));
    expect(strip(events)).toEqual([
      { type: 'write', path: '/w/x', tool_name: 'write' },
      { type: 'command', command: 'never ran', tool_name: 'bash' },
    ]);
  });

  it('a start record it cannot read: the end pairs with the call its toolCall block announced', () => {
    const [announce, , finished] = call('c', 'bash', { command: 'exit 1' }, 'Command exited with code 1', true);
    const { events } = translateText(adapter, lines(header, announce!, { type: 'tool_execution_start', toolCallId: 5 }, finished!, agentEnd));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { type: 'tool_execution_start', toolCallId: 5 } },
      { type: 'command', command: 'exit 1', exit_code: 1, is_success: false, tool_name: 'bash' },
    ]);
  });

  it('finding 9: a reused call id reports the first call too (without an outcome); the end pairs with the latest', () => {
    const { events } = translateText(adapter, lines(header, start('T1', 'bash', { command: 'rm -rf /important' }), start('T1', 'bash', { command: 'echo harmless' }), end('T1', 'bash', 'harmless'), agentEnd));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'bash' },
      { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'bash' },
    ]);
  });

  it('a toolCall block printed again after its call ended is no second call', () => {
    const records = call('c', 'bash', { command: 'ls' }, 'ok');
    const { events } = translateText(adapter, lines(header, ...records, records[0]!));
    expect(strip(events).filter((e) => e.type === 'command')).toHaveLength(1);
  });
});

describe('pi adapter: tool names that are Object properties (issue 19, finding 9)', () => {
  const session = (name: string) => lines(header, ...call('t1', name, { x: 1 }, 'ok'), agentEnd);
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'])('a tool named %s is "other" and its call comes out as one unknown, like a tool no harness has', (name) => {
    const { events } = translateText(adapter, session(name));
    const baseline = translateText(adapter, session('tool_no_harness_has')).events;
    expect(strip(events)).toEqual(JSON.parse(JSON.stringify(strip(baseline)).replaceAll('"tool_no_harness_has"', JSON.stringify(name))));
    expect(strip(events)).toEqual([expect.objectContaining({ type: 'unknown' })]);
    expect(piToolKind(name)).toBe('other');
  });
});

describe('pi adapter: messages, errors, records', () => {
  it('text -> agent, thinking -> reasoning; the final answer is the text of the last message Pi stopped with "stop"', () => {
    const { events, summary } = translateText(adapter, lines(header, assistant([{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Looking.' }], 'toolUse'), assistant([{ type: 'text', text: 'Done.' }], 'stop'), agentEnd));
    expect(strip(events)).toEqual([{ type: 'reasoning', message: 'hmm' }, { type: 'agent', message: 'Looking.' }, { type: 'agent', message: 'Done.' }]);
    expect(summary.result).toMatchObject({ final_text: 'Done.', is_error: false });
  });

  it.each([
    ['error', { errorMessage: '429 rate limited' }, { type: 'error', message: '429 rate limited' }],
    ['error', {}, { type: 'error', message: 'the model call failed (Pi gave no message)' }],
    ['aborted', { errorMessage: 'Request was aborted' }, { type: 'error', message: 'Request was aborted', code: 'aborted' }],
  ])('a message that stopped with %s is an error and, as the last one, the session’s verdict', (stop, extra, error) => {
    const { events, summary } = translateText(adapter, lines(header, assistant([], stop, extra), agentEnd));
    expect(strip(events)).toEqual([error]);
    expect(summary.result.is_error).toBe(true);
  });

  it('retries and compactions are warnings; a retry that gave up says so', () => {
    const { events } = translateText(adapter, lines(
      { type: 'auto_retry_start', attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: '529 overloaded' },
      { type: 'auto_retry_end', success: true, attempt: 1 },
      { type: 'auto_retry_end', success: false, attempt: 3, finalError: '529 overloaded' },
      { type: 'compaction_start', reason: 'threshold' },
      { type: 'compaction_end', reason: 'threshold', result: { summary: 's', firstKeptEntryId: 'e', tokensBefore: 1 }, aborted: false, willRetry: false },
      { type: 'compaction_end', reason: 'overflow', aborted: false, willRetry: false, errorMessage: 'Compaction failed: x' },
    ));
    expect(strip(events)).toEqual([
      { type: 'warning', message: 'model request failed (529 overloaded); retry 1/3 in 2000 ms', code: 'auto_retry' },
      { type: 'warning', message: 'retries gave up after attempt 3: 529 overloaded', code: 'auto_retry_failed' },
      { type: 'warning', message: expect.stringContaining('Pi compacts the context (threshold)'), code: 'compaction' },
      { type: 'warning', message: 'Compaction failed: x', code: 'compaction_failed' },
    ]);
  });

  it('a record it cannot read is unknown, never dropped', () => {
    const records = [
      'not json',
      { no: 'type' },
      { type: 'brand_new_event' },
      { type: 'session', id: 7 },
      { type: 'message_end', message: { role: 'bashExecution', command: 'ls' } },
      { type: 'message_end', message: { role: 'assistant', content: 'text, not blocks', usage: usage(1, 1) } },
      { type: 'tool_execution_end', toolCallId: 'x', result: {}, isError: 'false' },
      { type: 'auto_retry_end', success: 'yes' },
    ];
    const { events } = translateText(adapter, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n'));
    expect(events.map((e) => e.type)).toEqual(records.map(() => 'unknown'));
  });

  it('an unreadable content block is unknown; the others are kept', () => {
    const { events } = translateText(adapter, lines(assistant([{ type: 'text', text: 5 }, { type: 'image', data: 'x' }, { type: 'text', text: 'ok' }], 'stop'), agentEnd));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { type: 'text', text: 5 } }, { type: 'unknown', raw: { type: 'image', data: 'x' } }, { type: 'agent', message: 'ok' }]);
  });
});

describe('pi adapter: usage and cost', () => {
  it('sums the classes and Pi’s cost.total over model calls', () => {
    const totals = emptyTotals();
    expect(addMessageUsage(totals, usage(900, 80, 300, 0, 0.002))).toEqual([]);
    expect(addMessageUsage(totals, usage(100, 20, 0, 50, 0.001))).toEqual([]);
    expect(piTokens(totals)).toEqual({ input: 1000, output: 100, cache_read: 300, cache_write: 50, reasoning: null });
    expect(totals.cost).toBeCloseTo(0.003, 12);
  });

  it.each([
    ['a string count', { ...usage(900, 80), input: '900' }, 'input', { input: null, output: 160 }],
    ['a float cache count', { ...usage(900, 80), cacheRead: 1.5 }, 'cacheRead', { cache_read: null, input: 1800 }],
    ['a null output', { ...usage(900, 80), output: null }, 'output', { output: null }],
  ])('finding 7: %s makes its class null for the session, with a warning naming the field', (_label, bad, field, tokens) => {
    const { events, summary } = translateText(adapter, lines(assistant([], 'toolUse', { usage: usage(900, 80) }), assistant([], 'stop', { usage: bad }), agentEnd));
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`message_end.message.usage.${field} `) }]);
    expect(summary.result.tokens).toMatchObject(tokens);
  });

  it('an unreadable cost makes the estimate null, the tokens stay', () => {
    const { summary } = translateText(adapter, lines(assistant([], 'stop', { usage: { ...usage(1, 1), cost: { total: 'free' } } }), agentEnd));
    expect(summary.result.reported_cost_usd).toBeNull();
    expect(summary.result.raw_usage).toMatchObject({ estimated_cost_usd: null });
    expect(summary.result.tokens).toMatchObject({ input: 1, output: 1 });
  });

  it('a session cut before agent_end (killed, timed out) has unknown usage, the calls seen kept raw', () => {
    const cut = translateText(adapter, lines(header, assistant([], 'toolUse'), assistant([], 'toolUse')));
    expect(cut.summary.result).toMatchObject({ tokens: null, reported_cost_usd: null });
    expect(cut.summary.result.is_error).toBeUndefined();
    expect((cut.summary.result.raw_usage as { messages: unknown[] }).messages).toHaveLength(2);
    expect(strip(cut.events)).toEqual([{ type: 'warning', code: 'incomplete_usage', message: expect.stringContaining('2 model call(s)') }]);
    const whole = translateText(adapter, lines(header, assistant([], 'toolUse'), assistant([], 'stop'), agentEnd));
    expect(whole.summary.result).toMatchObject({ tokens: { input: 200, output: 20 }, reported_cost_usd: null, raw_usage: { estimated_cost_usd: 0.002 } });
    expect(cut.summary.result.raw_usage).not.toHaveProperty('estimated_cost_usd');
  });

  it('a compaction (its summary call reports no usage) leaves the session’s usage unknown', () => {
    const { summary } = translateText(adapter, lines(assistant([], 'stop'), { type: 'compaction_start', reason: 'threshold' }, agentEnd));
    expect(summary.result).toMatchObject({ tokens: null, reported_cost_usd: null });
  });
});

describe('pi adapter: invocation', () => {
  it('print mode, JSON events, Pi’s OpenRouter provider, offline; the prompt on stdin', () => {
    const inv = adapter.invocation({ model: 'anthropic/claude-sonnet-4.5', prompt: '-starts like an option @and a file', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['pi', '-p', '--mode', 'json', '--provider', 'openrouter', '--model', 'anthropic/claude-sonnet-4.5', '--offline']);
    expect(inv.stdin).toEqual({ text: '-starts like an option @and a file' });
    expect(inv.env).toMatchObject({ PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0' });
    expect(inv.files).toEqual([]);
  });

  it('an openrouter/ prefix is dropped; a continued session resumes by id', () => {
    const inv = adapter.invocation({ model: 'openrouter/qwen/qwen3-coder', prompt: 'p', workdir: '/w', home: '/h', resumeSessionId: 'sess-1' });
    expect(inv.argv.slice(6)).toEqual(['--model', 'qwen/qwen3-coder', '--offline', '--session', 'sess-1']);
  });

  it('a base URL overrides the built-in provider’s baseUrl in models.json, with no key in the file', () => {
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/' });
    expect(inv.files.map((f) => f.path)).toEqual([MODELS_FILE]);
    expect(JSON.parse(inv.files[0]!.content)).toEqual({ providers: { openrouter: { baseUrl: 'http://127.0.0.1:9/v1' } } });
    expect(inv.argv).toContain('mock-model');
  });
});
