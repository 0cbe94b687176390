import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import claudeAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { claudeToolKind } from './map-claude-tools.ts';

const manifest = getHarness('claude').manifest;
const adapter = claudeAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const SID = '514779f8-fea9-42fd-b874-f62a7401978f';

describe('claude adapter: recorded 2.1.197 transcripts', () => {
  it('maps every record of a full session to the right events, with 0 unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('claude-2.1.197-stream-json.jsonl'));
    expect(events.every((e) => e.type === 'system' || (e as { session_id?: string }).session_id === SID)).toBe(true);
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', is_success: true, tool_name: 'Bash' },
      { type: 'write', path: '/scratch/work-claude/hello.txt', is_success: true, tool_name: 'Write' },
      { type: 'read', path: '/scratch/work-claude/hello.txt', start_line: 1, end_line: 3, is_success: true, tool_name: 'Read' },
      { type: 'write', path: '/scratch/work-claude/hello.txt', start_line: 1, end_line: 2, is_success: true, tool_name: 'Edit' },
      { type: 'skill', path: '/scratch/h-claude/.claude/skills/demo/SKILL.md', skill_name: 'demo', is_success: true, tool_name: 'Skill' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'ab9b7c17c753609af', subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'ab9b7c17c753609af', subagent_name: 'general-purpose', is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Bash' },
      { type: 'agent', message: 'All done.' },
    ]);
    expect(summary.result).toMatchObject({
      session_id: SID,
      reported_cost_usd: 0.0761625,
      reported_model: 'claude-opus-4-8[1m]',
      is_error: false,
      final_text: 'All done.',
      // modelUsage (all calls, subagent included) wins over result.usage (main agent only: 9600 input).
      tokens: { input: 10800, output: 720, cache_read: 2700, cache_write: 450, reasoning: null },
    });
  });

  it('maps Grep and Glob to search events with their scope', () => {
    const { events } = translateFixture(adapter, fixture('claude-2.1.197-grep-glob.jsonl'));
    const searches = strip(events).filter((e) => e.type === 'search');
    expect(searches).toEqual([
      { type: 'search', query: 'hello', path: '/scratch/work-claude', is_success: true, tool_name: 'Grep' },
      { type: 'search', query: '**/*.txt', is_success: true, tool_name: 'Glob' },
    ]);
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
  });

  it('emits one agent message per block with partial messages on (stream_event deltas are not doubled)', () => {
    const { events } = translateFixture(adapter, fixture('claude-2.1.197-stream-json-partial.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'agent', message: 'Listing.' },
      { type: 'command', command: 'echo hi', is_success: true, tool_name: 'Bash' },
      { type: 'agent', message: 'Done.' },
    ]);
  });

  it('reports an HTTP 400 once, then the exit error with the harness output', () => {
    const { events, summary } = translateFixture(adapter, fixture('claude-2.1.197-error-400.jsonl'), { exitCode: 1 });
    const errors = strip(events).filter((e) => e.type === 'error');
    expect(errors[0]).toEqual({ type: 'error', message: 'API Error: 400 mock bad request', code: 'unknown' });
    expect(errors).toHaveLength(2);
    expect(errors[1]!.message).toMatch(/^claude exited with code 1:\n/);
    expect(summary.result.is_error).toBe(true);
    expect(summary.result.reported_cost_usd).toBe(0);
  });

  it('turns API retries into warnings with the HTTP status', () => {
    const { events } = translateFixture(adapter, fixture('claude-2.1.197-401-retries.jsonl'));
    const warnings = strip(events).filter((e) => e.type === 'warning');
    expect(warnings).toHaveLength(9);
    expect(warnings[0]).toEqual({ type: 'warning', message: 'API request failed (HTTP 401 authentication_failed); retry 1/10 in 594 ms', code: 'authentication_failed' });
  });
});

describe('claude adapter: recorded 2.1.332 transcripts (npm run fixtures:record claude)', () => {
  const W = '/tmp/tcab/runs/verify-claude-tools-mx6j3kzj/workspace';
  it('maps the full tool session, with the backgrounded subagent ending at its notification', () => {
    const { events, summary } = translateFixture(adapter, fixture('claude-2.1.332-tools.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', is_success: true, tool_name: 'Bash' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'Write' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 3, is_success: true, tool_name: 'Read' },
      { type: 'write', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'Edit' },
      { type: 'skill', path: '/tmp/tcab/runs/verify-claude-tools-mx6j3kzj/home/.claude/skills/demo/SKILL.md', skill_name: 'demo', is_success: true, tool_name: 'Skill' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'a9be65538be8ead99', subagent_name: 'general-purpose' },
      { type: 'agent', message: 'Subagent finished: nothing to do.' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'a9be65538be8ead99', subagent_name: 'general-purpose', is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Bash' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 9 model calls x (900 uncached + 300 cache read + 50 cache write + 80 output), subagent included.
    expect(summary.result.tokens).toEqual({ input: 8100, output: 720, cache_read: 2700, cache_write: 450, reasoning: null });
  });

  it('maps an HTTP 400 mid-session to one error after the work done before it', () => {
    const { events } = translateFixture(adapter, fixture('claude-2.1.332-api-error.jsonl'), { exitCode: 1 });
    expect(strip(events).slice(0, 3)).toEqual([
      { type: 'agent', message: 'Starting.' },
      { type: 'command', command: 'echo hi', is_success: true, tool_name: 'Bash' },
      { type: 'error', message: 'API Error: 400 mock bad request', code: 'unknown' },
    ]);
  });
});

describe('claude adapter: every tool name has a mapping', () => {
  const session = (toolName: string, input: object, result: object = { content: 'ok' }) =>
    [
      { type: 'system', subtype: 'init', cwd: '/w', session_id: 's1', model: 'claude-sonnet-4-5' },
      { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: toolName, input }] }, session_id: 's1' },
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: false, ...result }] }, session_id: 's1' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');

  it.each([
    ['Bash', { command: 'cat a.txt' }, { type: 'command', command: 'cat a.txt', is_success: true, tool_name: 'Bash' }],
    ['Read', { file_path: 'src/a.ts' }, { type: 'read', path: '/w/src/a.ts', is_success: true, tool_name: 'Read' }],
    ['Write', { file_path: '/w/b.txt', content: 'x' }, { type: 'write', path: '/w/b.txt', is_success: true, tool_name: 'Write' }],
    ['Edit', { file_path: '/w/b.txt', old_string: 'a', new_string: 'b' }, { type: 'write', path: '/w/b.txt', is_success: true, tool_name: 'Edit' }],
    ['MultiEdit', { file_path: '/w/b.txt', edits: [] }, { type: 'write', path: '/w/b.txt', is_success: true, tool_name: 'MultiEdit' }],
    ['NotebookEdit', { notebook_path: '/w/n.ipynb', new_source: '' }, { type: 'write', path: '/w/n.ipynb', is_success: true, tool_name: 'NotebookEdit' }],
    ['Grep', { pattern: 'foo', path: 'src' }, { type: 'search', query: 'foo', path: '/w/src', is_success: true, tool_name: 'Grep' }],
    ['Glob', { pattern: '*.ts' }, { type: 'search', query: '*.ts', is_success: true, tool_name: 'Glob' }],
    ['LS', { path: '/w/src' }, { type: 'list', path: '/w/src', is_success: true, tool_name: 'LS' }],
  ])('%s', (name, input, expected) => {
    const { events } = translateText(adapter, session(name, input));
    expect(strip(events)).toEqual([expected]);
  });

  it('Task/Agent without task_* records brackets the subagent itself', () => {
    for (const name of ['Task', 'Agent']) {
      const { events } = translateText(adapter, session(name, { subagent_type: 'Explore', prompt: 'p', description: 'd' }));
      expect(strip(events)).toEqual([
        { type: 'orchestration', action: 'subagent_started', subagent_id: 't1', subagent_name: 'Explore' },
        { type: 'orchestration', action: 'subagent_completed', subagent_id: 't1', subagent_name: 'Explore', is_success: true },
      ]);
    }
  });

  it('a failed Task is subagent_failed', () => {
    const { events } = translateText(adapter, session('Task', { subagent_type: 'Plan' }, { is_error: true, content: 'boom' }));
    expect(strip(events).at(-1)).toEqual({ type: 'orchestration', action: 'subagent_failed', subagent_id: 't1', subagent_name: 'Plan', is_success: false });
  });

  it.each(['WebFetch', 'WebSearch', 'TodoWrite', 'CronCreate', 'mcp__github__create_issue'])('%s has no event type: unknown with both records', (name) => {
    expect(claudeToolKind(name)).toBe('other');
    const { events } = translateText(adapter, session(name, { url: 'x' }));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { tool_use: { type: 'tool_use', id: 't1', name, input: { url: 'x' } }, tool_result: { type: 'tool_result', tool_use_id: 't1', is_error: false, content: 'ok' } } },
    ]);
  });

  it('a failed Skill (no base directory to name the file) is unknown, never a guessed path', () => {
    const { events } = translateText(adapter, session('Skill', { skill: 'demo' }, { is_error: true, content: 'Unknown skill' }));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it('a Skill whose base directory never comes is flushed as unknown', () => {
    const { events } = translateText(adapter, session('Skill', { skill: 'demo' }));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });
});

describe('claude adapter: damaged and unexpected input', () => {
  it('flushes tool calls that never got a result, without an outcome', () => {
    const text = [
      JSON.stringify({ type: 'system', subtype: 'init', cwd: '/w', session_id: 's1' }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't9', name: 'Bash', input: { command: 'sleep 100' } }] } }),
    ].join('\n');
    const { events } = translateText(adapter, text, { exitCode: 137 });
    expect(strip(events)[0]).toEqual({ type: 'command', command: 'sleep 100', tool_name: 'Bash' });
    expect(events.at(-1)?.type).toBe('error');
  });

  it('turns garbage, truncated JSON, unknown record types and unreadable fields into unknown and keeps going', () => {
    const text = [
      '\u0000\u0001binary\uFFFD',
      '{"type":"assistant","message":{"content":[{"type":"text","te',
      '{"type":"brand_new_record","x":1}',
      '{"type":"system","subtype":"brand_new_subtype"}',
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash"}]}}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"still here"}]}}',
    ].join('\n');
    const { events } = translateText(adapter, text);
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'agent']);
    expect(strip(events)[2]).toEqual({ type: 'unknown', raw: { type: 'brand_new_record', x: 1 } });
  });

  it('never stamps a session id the harness did not report', () => {
    const { events } = translateText(adapter, '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}');
    expect(events[0]).not.toHaveProperty('session_id');
  });
});

describe('claude invocation', () => {
  it('builds the non-interactive stream-json command with model, prompt and auto-approval', () => {
    const inv = adapter.invocation({ model: 'claude-sonnet-4-5', prompt: 'fix it', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:1234' });
    expect(inv.argv).toEqual(['claude', '-p', 'fix it', '--model', 'claude-sonnet-4-5', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
    expect(inv.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1234', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });
    expect(inv.stdin).toBe('close');
    expect(adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h', resumeSessionId: 's1' }).argv.slice(-2)).toEqual(['--resume', 's1']);
  });
});

describe('claude adapter: fields that fail their type are never guessed (issue 19)', () => {
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
  const bash = (id: string, command: string) => ({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name: 'Bash', input: { command } }] }, session_id: 's1' });
  const toolResult = (id: string, extra: object) => ({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'Exit code 3', ...extra }] }, session_id: 's1' });

  it.each([['"true"', 'true'], ['42', 42], ['null', null], ['{}', {}]])('finding 7: a tool result with is_error %s is unknown, and its call is reported without an outcome', (_label, isError) => {
    const { events } = translateText(adapter, lines(bash('t1', 'exit 3'), toolResult('t1', { is_error: isError })));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { type: 'tool_result', tool_use_id: 't1', content: 'Exit code 3', is_error: isError } },
      { type: 'command', command: 'exit 3', tool_name: 'Bash' },
    ]);
  });

  it.each([['"true"', 'true'], ['1', 1], ['null', null]])('finding 7: a result record with is_error %s is unknown, never a verdict', (_label, isError) => {
    const { events, summary } = translateText(adapter, lines({ type: 'result', subtype: 'success', is_error: isError, result: 'done', session_id: 's1' }));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { type: 'result', subtype: 'success', is_error: isError, result: 'done', session_id: 's1' } }]);
    expect(summary.result.is_error).toBeUndefined();
  });

  const usageResult = (entry: object, extra: object = {}) =>
    lines({ type: 'result', subtype: 'success', is_error: false, session_id: 's1', total_cost_usd: 0.5, modelUsage: { 'claude-sonnet-4-5': { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 30, cacheCreationInputTokens: 4, ...entry } }, ...extra });

  it.each([
    ['a string', { inputTokens: '100' }, 'input', 'modelUsage.claude-sonnet-4-5.inputTokens'],
    ['null', { outputTokens: null }, 'output', 'modelUsage.claude-sonnet-4-5.outputTokens'],
    ['a fraction', { cacheReadInputTokens: 2.5 }, 'cache_read', 'modelUsage.claude-sonnet-4-5.cacheReadInputTokens'],
    ['negative', { cacheCreationInputTokens: -4 }, 'cache_write', 'modelUsage.claude-sonnet-4-5.cacheCreationInputTokens'],
  ])('finding 7: a token count that is %s leaves its class unknown (null) with a warning, never 0', (_label, entry, cls, field) => {
    const { events, summary } = translateText(adapter, usageResult(entry));
    const expected: Record<string, number | null> = { input: 100, output: 20, cache_read: 30, cache_write: 4, reasoning: null };
    expected[cls] = null;
    expect(summary.result.tokens).toEqual(expected);
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining(`result.${field}`), code: 'unreadable_usage' }]);
  });

  it('finding 7: an unreadable total_cost_usd is no reported cost (null) with a warning, never a number', () => {
    const { events, summary } = translateText(adapter, usageResult({}, { total_cost_usd: '0.5' }));
    expect(summary.result.reported_cost_usd).toBeNull();
    expect(summary.result.tokens).toEqual({ input: 100, output: 20, cache_read: 30, cache_write: 0 + 4, reasoning: null });
    expect(strip(events)).toEqual([{ type: 'warning', message: expect.stringContaining('result.total_cost_usd'), code: 'unreadable_usage' }]);
  });

  it('finding 9: a reused tool-call id reports the first call too (without an outcome); the result pairs with the latest', () => {
    const { events } = translateText(adapter, lines(bash('T1', 'rm -rf /important'), bash('T1', 'echo harmless'), toolResult('T1', { is_error: false, content: 'harmless' })));
    expect(strip(events)).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'Bash' },
      { type: 'command', command: 'echo harmless', is_success: true, tool_name: 'Bash' },
    ]);
  });

  it('finding 9: a result that arrives before its call is paired with it, not dropped', () => {
    const { events } = translateText(adapter, lines(toolResult('T1', { is_error: true }), bash('T1', 'exit 3')));
    expect(strip(events)).toEqual([{ type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Bash' }]);
  });
});
