import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import copilotAdapter, { OPENROUTER_BASE_URL } from './adapter.ts';
import { copilotToolKind } from './map-copilot-tools.ts';
import { USAGE_REPORT } from './translator.ts';
import { copilotTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('copilot').manifest;
const adapter = copilotAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const usageOf = (session: string) => ({ [USAGE_REPORT]: readFileSync(fixture(`${session}.copilot-usage.json`), 'utf8') });
const W = '/scratch/work-copilot';

describe('copilot adapter: recorded transcripts', () => {
  it('1.0.102 reference session: complete records only, exit code from shellExecution, view of a directory is a listing', () => {
    const session = 'copilot-1.0.102-output-json';
    const { events, summary } = translateFixture(adapter, fixture(`${session}.jsonl`), { reports: usageOf(session) });
    const stripped = strip(events);
    expect(stripped.filter((e) => e.type !== 'unknown')).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'bash' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'create' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'view' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'edit' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'grep' },
      { type: 'search', query: '**/*.txt', is_success: true, tool_name: 'glob' },
      { type: 'list', path: W, is_success: true, tool_name: 'view' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: '77fbec58-7fff-47f4-bd75-0ad27a466f32', subagent_name: 'sub1' },
      { type: 'agent', message: 'Subagent finished: nothing to do.' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: '77fbec58-7fff-47f4-bd75-0ad27a466f32', subagent_name: 'sub1', is_success: true },
      // Copilot says success:true for `exit 3`; the exit code decides.
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'bash' },
      { type: 'agent', message: 'All done.' },
    ]);
    // The skill names no file: kept whole as the one unknown, at its place in the stream.
    expect(stripped.map((e) => e.type).indexOf('unknown')).toBe(9);
    expect(stripped.filter((e) => e.type === 'unknown')).toHaveLength(1);
    // 12 requests (11 main + 1 subagent): 14400 input including 3600 cache reads; 144 reasoning inside 960 output.
    expect(summary.result).toMatchObject({
      session_id: 'f1b8fe69-5961-497d-b982-893ebba9b69a',
      tokens: { input: 10800, output: 960, cache_read: 3600, cache_write: 0, reasoning: 144 },
      reported_cost_usd: null,
      reported_model: 'mock-model',
      is_error: false,
    });
  });

  it('without the usage report the session has no tokens and says why', () => {
    const { events, summary } = translateFixture(adapter, fixture('copilot-1.0.102-output-json.jsonl'));
    expect(summary.result.tokens).toBeNull();
    expect(strip(events).at(-1)).toEqual({ type: 'warning', message: "no token usage: Copilot's usage report (copilot-usage.json) was not written", code: 'usage_missing' });
  });

  it('recorded against the newest installable release: only the skill is unknown, usage from the recorded report', () => {
    const { events, summary } = translateFixture(adapter, fixture('copilot-1.0.102-tools.jsonl'), { reports: usageOf('copilot-1.0.102-tools') });
    expect(events.filter((e) => e.type === 'unknown').map((e) => JSON.stringify(e))).toEqual([expect.stringContaining('"toolName":"skill"')]);
    expect(summary.result.tokens).not.toBeNull();
  });

  it('an API error: the failed call is a warning (Copilot may retry), the session error an error, zero usage', () => {
    const session = 'copilot-1.0.102-api-error';
    const { events, summary } = translateFixture(adapter, fixture(`${session}.jsonl`), { exitCode: 1, reports: usageOf(session) });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'warning', message: 'model call failed (HTTP 400): {"message":"mock bad request","type":"invalid_request_error","code":null}', code: 'model_call_failure' },
      { type: 'error', message: '400 mock bad request', code: 'query' },
    ]);
    expect(summary.result).toMatchObject({ is_error: true, tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 } });
  });
});

describe('copilot adapter: tools, usage and invocation', () => {
  it.each([
    ['bash', 'command'], ['view', 'view'], ['create', 'write'], ['edit', 'write'], ['grep', 'search'], ['glob', 'search'], ['skill', 'skill'], ['task', 'subagent'],
    ['read_bash', 'other'], ['stop_bash', 'other'], ['sql', 'other'], ['read_agent', 'other'],
  ])('%s -> %s', (tool, kind) => {
    expect(copilotToolKind(tool)).toBe(kind);
  });

  it('a usage report sums every model; a shape it does not know gives no tokens rather than zeros', () => {
    const usage = (i: number, c: number) => ({ usage: { inputTokens: i, outputTokens: 10, cacheReadTokens: c, cacheWriteTokens: 1, reasoningTokens: 2 } });
    expect(copilotTokens({ modelMetrics: { a: usage(100, 40), b: usage(50, 0) } })).toEqual({ tokens: { input: 110, output: 20, cache_read: 40, cache_write: 2, reasoning: 4 }, unreadable: [] });
    expect(copilotTokens({ modelMetrics: { a: { requests: 1 } } })).toEqual({
      tokens: { input: null, output: null, cache_read: null, cache_write: null, reasoning: null },
      unreadable: ['modelMetrics.a.usage'],
    });
    expect(copilotTokens({})).toBeUndefined();
  });

  it('a view to the end of the file has no end line; a call cut off by the end of stdout has no outcome', () => {
    const start = (id: string, name: string, args: object) => JSON.stringify({ type: 'tool.execution_start', data: { toolCallId: id, toolName: name, arguments: args } });
    const done = JSON.stringify({ type: 'tool.execution_complete', data: { toolCallId: 'v', success: true, toolTelemetry: { properties: { viewType: 'file' } } } });
    const { events } = translateText(adapter, [start('v', 'view', { path: 'a.txt', view_range: [5, -1] }), done, start('b', 'bash', { command: 'sleep 9' })].join('\n'), { workdir: '/w' });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'read', path: '/w/a.txt', start_line: 5, is_success: true, tool_name: 'view' },
      { type: 'command', command: 'sleep 9', tool_name: 'bash' },
    ]);
  });

  it('api-key mode is BYOK against the endpoint (OpenRouter by default); subscription mode passes --model instead', () => {
    const byok = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/' });
    expect(byok.argv).toEqual(['copilot', '-p', 'p', '--output-format', 'json', '--allow-all', '--no-ask-user', '--no-auto-update', '--disable-client-telemetry', '--usage-output-file', '/h/copilot-usage.json']);
    expect(byok.env).toMatchObject({ COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_TYPE: 'openai', COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1', COPILOT_MODEL: 'mock-model' });
    expect(byok.reports).toEqual([USAGE_REPORT]);
    expect(adapter.invocation({ model: 'x/y', prompt: 'p', workdir: '/w', home: '/h' }).env.COPILOT_PROVIDER_BASE_URL).toBe(OPENROUTER_BASE_URL);
    const sub = adapter.invocation({ model: 'claude-sonnet-4.5', prompt: 'p', workdir: '/w', home: '/h', authMode: 'subscription', resumeSessionId: 's1' });
    expect(sub.argv.slice(-4)).toEqual(['--resume', 's1', '--model', 'claude-sonnet-4.5']);
    expect(sub.env).not.toHaveProperty('COPILOT_PROVIDER_BASE_URL');
    expect(sub.env).not.toHaveProperty('COPILOT_OFFLINE');
  });
});

describe('copilot adapter: fields that fail their type are never guessed (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const start = (id: string, name: string, args: object) => ({ type: 'tool.execution_start', data: { toolCallId: id, toolName: name, arguments: args } });
  const complete = (id: string, data: object) => ({ type: 'tool.execution_complete', data: { toolCallId: id, success: true, ...data } });
  const report = (usage: object) => ({ [USAGE_REPORT]: JSON.stringify({ modelMetrics: { m: { usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 40, cacheWriteTokens: 1, reasoningTokens: 2, ...usage } } } }) });

  it.each([['"3"', '3'], ['1.5', 1.5], ['null', null], ['{}', {}]])('finding 7: a shell exitCode of %s is no success: the completion is unknown, the command has no outcome', (_label, exitCode) => {
    const done = complete('c1', { shellExecution: { exitCode } });
    const { events } = translateText(adapter, lines(start('c1', 'bash', { command: 'exit 3' }), done), { reports: report({}) });
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: done },
      { type: 'command', command: 'exit 3', tool_name: 'bash' },
    ]);
  });

  it('finding 7: a view whose completion never came is unknown, never guessed a read (it may be a directory)', () => {
    const view = start('v1', 'view', { path: '/w/src' });
    const { events } = translateText(adapter, lines(view), { reports: report({}) });
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { tool_start: view } }]);
    const listed = translateText(adapter, lines(view, complete('v1', { toolTelemetry: { properties: { viewType: 'directory' } } })), { reports: report({}) });
    expect(strip(listed.events)).toEqual([{ type: 'list', path: '/w/src', is_success: true, tool_name: 'view' }]);
  });

  it.each([
    ['a string cache-read count', { cacheReadTokens: '40' }, { input: null, cache_read: null, cache_write: 1, output: 10, reasoning: 2 }, 'modelMetrics.m.usage.cacheReadTokens'],
    ['a null reasoning count', { reasoningTokens: null }, { input: 60, cache_read: 40, cache_write: 1, output: 10, reasoning: null }, 'modelMetrics.m.usage.reasoningTokens'],
  ])('finding 7: %s in the usage report leaves what it feeds unknown (null) with a warning, never 0', (_label, bad, expected, field) => {
    const { events, summary } = translateText(adapter, '', { reports: report(bad) });
    expect(summary.result.tokens).toEqual(expected);
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining(field), code: 'unreadable_usage' }]);
  });

  it('finding 9: a reused tool-call id reports the first call too (without an outcome); the completion pairs with the latest', () => {
    const { events } = translateText(adapter, lines(start('T1', 'bash', { command: 'rm -rf /important' }), start('T1', 'bash', { command: 'echo harmless' }), complete('T1', { shellExecution: { exitCode: 0 } })), { reports: report({}) });
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'bash' },
      { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true, tool_name: 'bash' },
    ]);
  });
});
