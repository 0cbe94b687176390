import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import clineAdapter from './adapter.ts';
import { clineToolKind } from './map-cline-tools.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('cline').manifest;
const adapter = clineAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-cline';

describe('cline adapter: recorded transcripts', () => {
  it('3.0.65 reference session: batch tools one event per element, subagents from the hooks, exit codes from their fixed text', () => {
    const { events, summary } = translateFixture(adapter, fixture('cline-3.0.65-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', is_success: true, tool_name: 'run_commands' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'editor' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read_files' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'editor' },
      { type: 'search', query: 'hello', is_success: true, tool_name: 'search_codebase' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'agent_1796227983492_sdtahj' },
      { type: 'agent', message: 'Subagent finished: nothing to do.' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'agent_1796227983492_sdtahj', is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'run_commands' },
      { type: 'agent', message: 'All done.' },
    ]);
    // inputTokens 9600 already holds the 2400 cache reads: 7200 uncached. totalCost is Cline's own estimate: raw only.
    expect(summary.result).toMatchObject({
      session_id: 'conv_1796227982691_47lgnyg',
      tokens: { input: 7200, output: 640, cache_read: 2400, cache_write: 0, reasoning: null },
      reported_cost_usd: null,
      is_error: false,
      final_text: 'All done.',
    });
  });

  it('recorded against the newest installable release: 0 unknown', () => {
    expect(translateFixture(adapter, fixture('cline-3.0.65-tools.jsonl')).events.filter((e) => e.type === 'unknown')).toEqual([]);
  });

  it('an API error is reported once by the agent loop, then the exit status', () => {
    const { events, summary } = translateFixture(adapter, fixture('cline-3.0.65-api-error.jsonl'), { exitCode: 1 });
    const errors = strip(events).filter((e) => e.type === 'error');
    expect(errors[0]).toEqual({ type: 'error', message: 'mock bad request', code: 'Error' });
    expect(errors).toHaveLength(2);
    expect(errors[1]!.message).toMatch(/^cline exited with code 1/);
    expect(summary.result).toMatchObject({ is_error: true });
  });
});

describe('cline adapter: tools and invocation', () => {
  it.each([
    ['run_commands', 'command'], ['read_files', 'read'], ['editor', 'write'], ['search_codebase', 'search'], ['spawn_agent', 'subagent'],
    ['fetch_web_content', 'other'], ['skills', 'other'], ['ask_question', 'other'],
  ])('%s -> %s', (tool, kind) => {
    expect(clineToolKind(tool)).toBe(kind);
  });

  it('a tool whose output never arrives is reported at the end without an outcome', () => {
    const start = { type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolCallId: 't1', toolName: 'read_files', input: { files: [{ path: 'a.txt' }] } } };
    const { events } = translateText(adapter, JSON.stringify(start), { workdir: '/w' });
    expect(strip(events)).toEqual([{ type: 'read', path: '/w/a.txt', tool_name: 'read_files' }]);
  });

  it('a record of an unknown shape is kept as unknown', () => {
    const { events } = translateText(adapter, [JSON.stringify({ type: 'brand_new' }), 'not json'].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown']);
  });

  it('a base URL becomes an OpenAI-compatible provider whose key the driver fills in', () => {
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'say hi', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/' });
    expect(inv.argv).toEqual(['cline', '--json', 'say hi']);
    expect(inv.stdin).toBe('close');
    const providers = JSON.parse(inv.files[0]!.content);
    expect(inv.files[0]!.path).toBe('.cline/data/settings/providers.json');
    expect(providers.providers['openai-compatible'].settings).toEqual({ provider: 'openai-compatible', apiKey: API_KEY_PLACEHOLDER, model: 'mock-model', baseUrl: 'http://127.0.0.1:9/v1' });
  });
});

describe('cline adapter: fields that fail their type are never guessed (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const runResult = (extra: object) => ({ type: 'run_result', finishReason: 'completed', text: 'done', usage: { inputTokens: 9600, outputTokens: 640, cacheReadTokens: 2400, cacheWriteTokens: 0, totalCost: 0 }, ...extra });
  const startTool = (id: string, command: string) => ({ type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: 'run_commands', toolCallId: id, input: { commands: [command] } } });
  const endTool = (id: string, output: object[]) => ({ type: 'agent_event', event: { type: 'content_end', contentType: 'tool', toolName: 'run_commands', toolCallId: id, output } });

  it.each([
    ['a string input count', { inputTokens: '9600' }, { input: null, cache_read: 2400, cache_write: 0, output: 640 }, 'run_result.usage.inputTokens'],
    ['a null output count', { outputTokens: null }, { input: 7200, cache_read: 2400, cache_write: 0, output: null }, 'run_result.usage.outputTokens'],
    ['a string cache-read count', { cacheReadTokens: '2400' }, { input: null, cache_read: null, cache_write: 0, output: 640 }, 'run_result.usage.cacheReadTokens'],
  ])('finding 7: %s leaves what it feeds unknown (null) with a warning, never 0', (_label, bad, expected, field) => {
    const usage = { inputTokens: 9600, outputTokens: 640, cacheReadTokens: 2400, cacheWriteTokens: 0, totalCost: 0, ...bad };
    const { events, summary } = translateText(adapter, lines(runResult({ usage })));
    expect(summary.result.tokens).toEqual({ ...expected, reasoning: null });
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining(field), code: 'unreadable_usage' }]);
  });

  it('finding 7: a run_result without finishReason gives no verdict; a wrong-typed one is unknown', () => {
    const { finishReason: _omitted, ...withoutReason } = runResult({});
    expect(translateText(adapter, lines(withoutReason)).summary.result.is_error).toBeUndefined();
    const { events, summary } = translateText(adapter, lines(runResult({ finishReason: 42 })));
    expect(strip(events).map((e) => e.type)).toEqual(['unknown']);
    expect(summary.result.is_error).toBeUndefined();
  });

  it('finding 9: a reused tool-call id reports the first tool too (without an outcome); the output pairs with the latest', () => {
    const { events } = translateText(adapter, lines(startTool('T1', 'rm -rf /important'), startTool('T1', 'echo harmless'), endTool('T1', [{ query: 'echo harmless', result: 'harmless', success: true }])));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'run_commands' },
      { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'run_commands' },
    ]);
  });

  it('an end that names another tool than its start is no outcome of it; an empty batch is shown raw', () => {
    const otherTool = { type: 'agent_event', event: { type: 'content_end', contentType: 'tool', toolName: 'editor', toolCallId: 'T1', output: { success: true } } };
    const { events } = translateText(adapter, lines(startTool('T1', 'ls'), otherTool));
    expect(strip(events)).toEqual([{ type: 'command', command: 'ls', tool_name: 'run_commands' }, { type: 'unknown', raw: otherTool }]);
    const noCommands = { type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: 'run_commands', toolCallId: 'T2', input: { commands: [] } } };
    expect(strip(translateText(adapter, lines(noCommands, endTool('T2', []))).events).map((e) => e.type)).toEqual(['unknown']);
  });
});
