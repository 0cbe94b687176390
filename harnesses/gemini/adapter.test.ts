import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import geminiAdapter from './adapter.ts';
import { geminiToolKind } from './map-gemini-tools.ts';
import { geminiTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = geminiAdapter(getHarness('gemini').manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-gemini';
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');

describe('gemini adapter: recorded transcripts', () => {
  it('0.61.0 reference session: every record mapped, the failed shell command recognised despite status "success"', () => {
    const { events, summary } = translateFixture(adapter, fixture('gemini-0.61.0-stream-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'agent', message: 'Let me list files.' },
      // A command that printed output: Gemini reports no outcome for it (issue 41), so none is claimed.
      { type: 'command', command: 'ls -la && echo hi', tool_name: 'run_shell_command' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'write_file' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read_file' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'replace' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'grep_search' },
      { type: 'search', query: '**/*.txt', is_success: true, tool_name: 'glob' },
      { type: 'list', path: W, is_success: true, tool_name: 'list_directory' },
      { type: 'skill', path: '/scratch/h-gemini/.gemini/skills/demo/SKILL.md', skill_name: 'demo', is_success: true, tool_name: 'activate_skill' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'invoke_agent__invoke_agent_1796227460751_0', subagent_name: 'generalist' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'invoke_agent__invoke_agent_1796227460751_0', subagent_name: 'generalist', is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'run_shell_command' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 29 calls x 1200 prompt tokens incl. 300 cached; 80 candidates; thoughts only inside total: 37468 - 34800 - 2320 = 348.
    expect(summary.result).toMatchObject({ session_id: 'bc3782c0-d322-4500-8595-e92edc5f56c7', tokens: { input: 34800 - 8700, cache_read: 8700, output: 2320 + 348, reasoning: 348, cache_write: null } });
  });

  it('recorded against the newest release (npm run fixtures:record gemini): 0 unknown', () => {
    const { events } = translateFixture(adapter, fixture('gemini-0.61.0-tools.jsonl'));
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(events.find((e) => e.type === 'command' && e.exit_code === 3)).toMatchObject({ is_success: false });
  });

  it('an API error result is an error event with Gemini’s own type', () => {
    const { events, summary } = translateFixture(adapter, fixture('gemini-0.61.0-error.jsonl'), { exitCode: 144 });
    expect(strip(events)[0]).toEqual({ type: 'error', message: '[API Error: {"type":"error","error":{"type":"invalid_request_error","message":"mock bad request"}}]', code: 'unknown' });
    expect(summary.result.is_error).toBe(true);
  });
});

describe('gemini adapter: issue 41 (hand-written snippets in 0.61.0 format)', () => {
  it('a shell command’s is_success/exit_code come only from what reports the command’s outcome, never from the tool status', () => {
    const { events } = translateFixture(adapter, fixture('gemini-0.61.0-handwritten-shell-outcomes.jsonl'));
    expect(strip(events).filter((e) => e.type === 'command')).toEqual([
      // Output of a failing command: Gemini prints only the output, with status "success": no outcome is reported.
      { type: 'command', command: 'ls nonexistent', tool_name: 'run_shell_command' },
      { type: 'command', command: 'echo hi', tool_name: 'run_shell_command' },
      // The outcome text inside the command's own output is output, not Gemini's report.
      { type: 'command', command: 'cat build.log', tool_name: 'run_shell_command' },
      { type: 'command', command: 'sleep 100', is_success: false, tool_name: 'run_shell_command' },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'run_shell_command' },
    ]);
  });
});

describe('gemini adapter: records and tools', () => {
  it('joins streamed deltas into one message, flushed by the next record', () => {
    const { events } = translateText(adapter, lines({ type: 'message', role: 'assistant', content: 'Hel', delta: true }, { type: 'message', role: 'assistant', content: 'lo.', delta: true }, { type: 'error', severity: 'warning', message: 'Loop detected' }, { type: 'message', role: 'assistant', content: 'Bye', delta: true }));
    expect(strip(events)).toEqual([{ type: 'agent', message: 'Hello.' }, { type: 'warning', message: 'Loop detected' }, { type: 'agent', message: 'Bye' }]);
  });

  it.each([
    ['run_shell_command', 'command'], ['read_file', 'read'], ['read_many_files', 'read'], ['write_file', 'write'], ['replace', 'write'], ['grep_search', 'search'], ['search_file_content', 'search'],
    ['glob', 'search'], ['list_directory', 'list'], ['activate_skill', 'skill'], ['invoke_agent', 'subagent'], ['web_fetch', 'other'], ['google_web_search', 'other'], ['update_topic', 'other'], ['enter_plan_mode', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(geminiToolKind(name)).toBe(kind);
  });

  it('a skill whose result names no directory is unknown, never a guessed path', () => {
    const { events } = translateText(adapter, lines({ type: 'tool_use', tool_name: 'activate_skill', tool_id: 's1', parameters: { name: 'demo' } }, { type: 'tool_result', tool_id: 's1', status: 'error', error: { type: 'x', message: 'no such skill' } }));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it('usage: cached inside input_tokens is subtracted; thoughts derived from total_tokens go into output as reasoning', () => {
    expect(geminiTokens({ input_tokens: 1200, cached: 300, output_tokens: 68, total_tokens: 1280 })).toEqual({ tokens: { input: 900, cache_read: 300, output: 80, reasoning: 12, cache_write: null }, unreadable: [] });
  });

  it('invocation: headless -p, pinned model, stream-json, yolo, trusted workspace; a base URL selects API-key auth in settings', () => {
    const inv = adapter.invocation({ model: 'gemini-2.5-pro', prompt: 'fix it', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/' });
    expect(inv.argv).toEqual(['gemini', '-p', 'fix it', '-m', 'gemini-2.5-pro', '--output-format', 'stream-json', '--yolo']);
    expect(inv.env).toMatchObject({ GEMINI_CLI_TRUST_WORKSPACE: 'true', GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9' });
    expect(JSON.parse(inv.files[0]!.content)).toMatchObject({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } });
    expect(JSON.parse(adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h' }).files[0]!.content).security).toBeUndefined();
  });
});

describe('gemini adapter: fields that fail their type are never guessed (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const shell = (id: string, command: string) => ({ type: 'tool_use', tool_name: 'run_shell_command', tool_id: id, parameters: { command } });

  it.each([['"true"', 'true'], ['42', 42], ['null', null], ['"failed"', 'failed']])('finding 7: a tool result with status %s is unknown, and its call is reported without an outcome', (_label, status) => {
    const { events } = translateText(adapter, lines(shell('c1', 'exit 3'), { type: 'tool_result', tool_id: 'c1', status, output: 'Command exited with code: 3' }));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { type: 'tool_result', tool_id: 'c1', status, output: 'Command exited with code: 3' } },
      { type: 'command', command: 'exit 3', tool_name: 'run_shell_command' },
    ]);
  });

  it.each([['42', 42], ['null', null], ['"ok"', 'ok']])('finding 7: a result with status %s is unknown: no verdict, no invented error', (_label, status) => {
    const { events, summary } = translateText(adapter, lines({ type: 'result', status, stats: { input_tokens: 10, output_tokens: 2, cached: 0, total_tokens: 12 } }));
    expect(strip(events).map((e) => e.type)).toEqual(['unknown']);
    expect(summary.result.is_error).toBeUndefined();
  });

  it.each([
    ['a string prompt count', { input_tokens: '1200' }, { input: null, cache_read: 300, output: null, reasoning: null }, 'result.stats.input_tokens'],
    ['a null total', { total_tokens: null }, { input: 900, cache_read: 300, output: null, reasoning: null }, 'result.stats.total_tokens'],
  ])('finding 7: %s leaves what it feeds unknown (null) with a warning, never 0', (_label, bad, expected, field) => {
    const stats = { input_tokens: 1200, cached: 300, output_tokens: 68, total_tokens: 1280, ...bad };
    const { events, summary } = translateText(adapter, lines({ type: 'result', status: 'success', stats }));
    expect(summary.result.tokens).toEqual({ ...expected, cache_write: null });
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining(field), code: 'unreadable_usage' }]);
  });

  it('finding 9: a reused tool id reports the first call too (without an outcome); the result pairs with the latest', () => {
    const { events } = translateText(adapter, lines(shell('T1', 'rm -rf /important'), shell('T1', 'echo harmless'), { type: 'tool_result', tool_id: 'T1', status: 'success', output: 'harmless' }));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'run_shell_command' },
      { type: 'command', command: 'echo harmless', tool_name: 'run_shell_command' },
    ]);
  });
});
