import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import { parseVersion } from '../../driver/stages/probe.ts';
import openHandsAdapter, { liteLlmModel } from './adapter.ts';
import { MAX_BLOCK_CHARS } from './cli-text.ts';
import { openHandsToolKind } from './map-openhands-tools.ts';
import { STATE_PATH, STATE_SIDE_FILE } from './translator.ts';
import { openHandsState } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('openhands').manifest;
const adapter = openHandsAdapter(manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => join(fixtures, name);
const state = (name: string) => ({ [STATE_SIDE_FILE]: readFileSync(fixture(name), 'utf8') });
const lines = (...records: (object | string)[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');

// Records in OpenHands 1.16.0's shapes (fixtures/openhands-1.16.0-tools.jsonl).
const text = (t: string) => ({ cache_prompt: false, type: 'text', text: t });
const prompt = { id: 'm0', source: 'user', llm_message: { role: 'user', content: [text('do the thing')], reasoning_content: null, thinking_blocks: [] }, kind: 'MessageEvent' };
const said = (t: string, extra: object = {}) => ({ id: 'm1', source: 'agent', llm_message: { role: 'assistant', content: [text(t)], tool_calls: null, reasoning_content: null, thinking_blocks: [], ...extra }, kind: 'MessageEvent' });
const action = (id: string, tool: string, act: object | null, extra: object = {}) => ({
  id: `a-${id}`, source: 'agent', thought: [], reasoning_content: null, thinking_blocks: [], action: act, tool_name: tool, tool_call_id: id,
  tool_call: { id, name: tool, arguments: JSON.stringify(act ?? {}), origin: 'completion' }, kind: 'ActionEvent', ...extra,
});
const observation = (id: string, tool: string, obs: object) => ({ id: `o-${id}`, source: 'environment', tool_name: tool, tool_call_id: id, observation: obs, action_id: `a-${id}`, kind: 'ObservationEvent' });
const refused = (id: string, tool: string, error: string) => ({ id: `e-${id}`, source: 'agent', tool_name: tool, tool_call_id: id, error, kind: 'AgentErrorEvent' });
const terminal = (id: string, command: string, exit: number | null, extra: object = {}) => [
  action(id, 'terminal', { command, is_input: false, timeout: null, reset: false, kind: 'TerminalAction', ...extra }),
  observation(id, 'terminal', { content: [text('out')], is_error: exit !== 0, command, exit_code: exit, timeout: exit === null, kind: 'TerminalObservation' }),
];
const editor = (id: string, args: object, shown: string, isError = false) => [
  action(id, 'file_editor', { file_text: null, old_str: null, new_str: null, insert_line: null, view_range: null, kind: 'FileEditorAction', ...args }),
  observation(id, 'file_editor', { content: [text(shown)], is_error: isError, command: (args as { command: string }).command, path: null, kind: 'FileEditorObservation' }),
];
const task = (id: string, status: string, isError: boolean) => [
  action(id, 'task', { description: 'Check it', prompt: 'check', subagent_type: 'general-purpose', resume: null, kind: 'TaskAction' }),
  observation(id, 'task', { content: [text('done')], is_error: isError, task_id: 'task_00000001', subagent: 'general-purpose', status, kind: 'TaskObservation' }),
];
const finished = ['Agent finished', 'Conversation ID: 0123456789abcdef0123456789abcdef'];
const stateFile = (metrics: Record<string, object>, status = 'finished') => JSON.stringify({ execution_status: status, stats: { usage_to_metrics: metrics } });
const metrics = (prompt: number, completion: number, cacheRead = 0, cacheWrite = 0, reasoning = 0, cost = 0) => ({
  model_name: 'openrouter/x', accumulated_cost: cost,
  accumulated_token_usage: { model: 'openrouter/x', prompt_tokens: prompt, completion_tokens: completion, cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite, reasoning_tokens: reasoning, context_window: 0, per_turn_token: 0, response_id: '' },
});
/** The events of a stream, text blocks aside. */
const typed = (stdout: string, reports = {}) => strip(translateText(adapter, stdout, { reports }).events).filter((e) => !(e.type === 'unknown' && typeof e.raw === 'string'));

describe('openhands adapter: recorded transcripts', () => {
  it('1.16.0 reference sample: the command with its exit code, the answer, the conversation id; usage from base_state.json', () => {
    const { events, summary } = translateFixture(adapter, fixture('openhands-1.16.0-headless-json.jsonl'), { reports: state('openhands-1.16.0-headless-json.state') });
    expect(strip(events)).toEqual([
      // The CLI's status text before the run: one block, the prompt echo between its lines does not split it.
      { type: 'unknown', raw: expect.stringMatching(/^OpenHands CLI terminal UI may not work correctly[^]*\nInitializing agent\.\.\.\n✓ Agent initialized with model: openai\/stub-model\nAgent is working$/) },
      { type: 'command', command: 'echo hi-from-stub', exit_code: 0, is_success: true, tool_name: 'terminal' },
      { type: 'agent', message: 'Stub says: done.' },
      { type: 'unknown', raw: expect.stringMatching(/^Agent finished\n[^]*CONVERSATION SUMMARY[^]*Conversation ID: 062dea4d4b2c4ef7ac52653995c19554\n[^]*conversation\.$/) },
    ]);
    // Two model calls of {prompt 120 (cache read 20 included), completion 15 (reasoning 3)}; the condenser's are 0.
    expect(summary.result).toMatchObject({
      session_id: '062dea4d4b2c4ef7ac52653995c19554',
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: 0, reasoning: 6 },
      reported_model: 'openai/stub-model',
      final_text: 'Stub says: done.',
    });
    // accumulated_cost 0 is LiteLLM's "no price for this model", never a charge or a free run.
    expect(summary.result.reported_cost_usd).toBeNull();
    expect(summary.result.raw_usage).toMatchObject({ estimated_cost_usd: null, usage_to_metrics: { agent: { accumulated_cost: 0 }, condenser: {} } });
    // The sample's state file holds only its stats: no execution status, no verdict claimed.
    expect(summary.result.is_error).toBeUndefined();
  });

  it('1.16.0 against the stub, tools scenario: every call mapped, a subagent, exit codes, usage including the subagent’s', () => {
    const { events, summary } = translateFixture(adapter, fixture('openhands-1.16.0-tools.jsonl'), { reports: state('openhands-1.16.0-tools.state') });
    const kinds = strip(events).map((e) => `${e.type}${e.tool_name ? `:${e.tool_name}` : ''}${e.type === 'orchestration' ? `:${String(e.action)}` : ''}`);
    expect(kinds).toEqual([
      'unknown', 'reasoning', 'agent', 'command:terminal', 'write:file_editor', 'read:file_editor', 'list:file_editor', 'write:file_editor', 'write:file_editor',
      'command:terminal', 'unknown', 'orchestration:subagent_started', 'orchestration:subagent_completed', 'reasoning', 'agent', 'unknown',
    ]);
    const W = '/tmp/ohx/r-t/work';
    expect(strip(events).filter((e) => e.type !== 'unknown' && e.type !== 'reasoning' && e.type !== 'agent')).toEqual([
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'terminal' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'file_editor' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'file_editor' },
      { type: 'list', path: W, is_success: true, tool_name: 'file_editor' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'file_editor' },
      { type: 'write', path: `${W}/hello.txt`, is_success: false, tool_name: 'file_editor' },
      { type: 'command', command: "sh -c 'exit 3'", exit_code: 3, is_success: false, tool_name: 'terminal' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'call_h', subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'call_h', subagent_name: 'general-purpose', is_success: true },
    ]);
    // The todo list has no event type: unknown with its call and result.
    expect(strip(events)[10]).toMatchObject({ type: 'unknown', raw: { ActionEvent: { tool_name: 'task_tracker' }, ObservationEvent: { observation: { kind: 'TaskTrackerObservation' } } } });
    // 11 agent calls of {prompt 1200 (cache read 300), completion 80 (reasoning 12)} and the subagent's one call.
    expect(summary.result).toMatchObject({
      session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tokens: { input: 10800, output: 960, cache_read: 3600, cache_write: 0, reasoning: 144 },
      reported_cost_usd: null,
      reported_model: 'openrouter/mock-model',
      is_error: false,
      final_text: 'All done.',
    });
    expect(Object.keys((summary.result.raw_usage as { usage_to_metrics: object }).usage_to_metrics)).toEqual(['agent', 'condenser', 'task:task_00000001']);
  });

  it('1.16.0 against the stub, HTTP 400: OpenHands exits 0; the ConversationErrorEvent and the state say the run failed', () => {
    const { events, summary } = translateFixture(adapter, fixture('openhands-1.16.0-api-error.jsonl'), { reports: state('openhands-1.16.0-api-error.state') });
    expect(strip(events).filter((e) => e.type !== 'unknown')).toEqual([
      { type: 'error', message: 'litellm.BadRequestError: OpenrouterException - {"error":{"message":"mock bad request","type":"invalid_request_error","code":null}}', code: 'LLMBadRequestError' },
    ]);
    // The summary box restates the system prompt: its block is cut, saying how big it was.
    const summaryBox = strip(events).at(-1)!;
    expect(summaryBox).toMatchObject({ type: 'unknown', original_bytes: expect.any(Number) });
    expect((summaryBox.raw as string).length).toBeLessThan(MAX_BLOCK_CHARS + 100);
    expect(summaryBox.original_bytes).toBeGreaterThan(20_000);
    expect(summary.result).toMatchObject({ is_error: true, tokens: { input: 0, output: 0 }, session_id: '8a32bd89aae0442faeb46158199e7ab8' });
    expect(summary.result.final_text).toBeUndefined();
  });

  it('offline, the public-skills clone fails harmlessly: its four ERROR logs on stderr are warnings, never an error', () => {
    const { events } = translateFixture(adapter, fixture('openhands-1.16.0-tools.jsonl'), {
      stderr: readFileSync(fixture('openhands-1.16.0-tools.stderr'), 'utf8'),
      reports: state('openhands-1.16.0-tools.state'),
    });
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    const clones = events.filter((e) => e.type === 'warning' && e.message.includes('Git command failed: git clone'));
    expect(clones).toHaveLength(4);
  });

  it('without the state file (not written, or unreadable) the tokens are unknown, never 0', () => {
    const { summary } = translateFixture(adapter, fixture('openhands-1.16.0-tools.jsonl'));
    expect(summary.result).toMatchObject({ tokens: null, raw_usage: null, reported_cost_usd: null, final_text: 'All done.' });
    expect(summary.result.is_error).toBeUndefined();
  });
});

describe('openhands adapter: tools', () => {
  it.each([
    ['terminal', 'command'], ['file_editor', 'text_editor'], ['task', 'subagent'],
    ['task_tracker', 'other'], ['finish', 'other'], ['think', 'other'], ['execute_bash', 'other'], ['Terminal', 'other'], ['constructor', 'other'], ['__proto__', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(openHandsToolKind(name)).toBe(kind);
  });

  it.each([
    ['a command that exited 0', terminal('c', 'ls', 0), [{ type: 'command', command: 'ls', exit_code: 0, is_success: true, tool_name: 'terminal' }]],
    ['a command that exited 3', terminal('c', "sh -c 'exit 3'", 3), [{ type: 'command', command: "sh -c 'exit 3'", exit_code: 3, is_success: false, tool_name: 'terminal' }]],
    // -1: the shell went away under the command (a top-level `exit`); null: it timed out. No exit code, no verdict.
    ['a command whose shell went away (exit_code -1, is_error)', terminal('c', 'exit 3', -1), [{ type: 'command', command: 'exit 3', tool_name: 'terminal' }]],
    ['a command that timed out (exit_code null)', terminal('c', 'sleep 999', null), [{ type: 'command', command: 'sleep 999', tool_name: 'terminal' }]],
    ['a create', editor('e', { command: 'create', path: '/w/a.txt', file_text: 'x' }, 'File created successfully at: /w/a.txt'), [{ type: 'write', path: '/w/a.txt', is_success: true, tool_name: 'file_editor' }]],
    ['an insert', editor('e', { command: 'insert', path: '/w/a.txt', insert_line: 1, new_str: 'y' }, 'The file /w/a.txt has been edited.'), [{ type: 'write', path: '/w/a.txt', is_success: true, tool_name: 'file_editor' }]],
    ['an undo_edit', editor('e', { command: 'undo_edit', path: '/w/a.txt' }, 'Last edit to /w/a.txt undone successfully.'), [{ type: 'write', path: '/w/a.txt', is_success: true, tool_name: 'file_editor' }]],
    ['a str_replace that found nothing', editor('e', { command: 'str_replace', path: '/w/a.txt', old_str: 'q', new_str: 'r' }, 'No replacement was performed', true), [{ type: 'write', path: '/w/a.txt', is_success: false, tool_name: 'file_editor' }]],
    ['a view of a whole file', editor('e', { command: 'view', path: '/w/a.txt' }, "Here's the result of running `cat -n` on /w/a.txt:\n     1\thello\n"), [{ type: 'read', path: '/w/a.txt', is_success: true, tool_name: 'file_editor' }]],
    ['a view from a line to the end', editor('e', { command: 'view', path: '/w/a.txt', view_range: [3, -1] }, "Here's the result of running `cat -n` on /w/a.txt:\n     3\tc\n"), [{ type: 'read', path: '/w/a.txt', start_line: 3, is_success: true, tool_name: 'file_editor' }]],
    ['a view past the end (OpenHands’ note gives the end)', editor('e', { command: 'view', path: '/w/a.txt', view_range: [2, 50] }, "NOTE: We only show up to 4 since there're only 4 lines in this file.\nHere's the result of running `cat -n` on /w/a.txt:\n"), [{ type: 'read', path: '/w/a.txt', start_line: 2, end_line: 4, is_success: true, tool_name: 'file_editor' }]],
    ['a view of a directory', editor('e', { command: 'view', path: '/w' }, "Here's the files and directories up to 2 levels deep in /w, excluding hidden items:\n/w/\n/w/a.txt"), [{ type: 'list', path: '/w', is_success: true, tool_name: 'file_editor' }]],
    ['a subagent that completed', task('t', 'completed', false), [
      { type: 'orchestration', action: 'subagent_started', subagent_id: 't', subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 't', subagent_name: 'general-purpose', is_success: true },
    ]],
    ['a subagent that failed', task('t', 'error', true), [
      { type: 'orchestration', action: 'subagent_started', subagent_id: 't', subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 't', subagent_name: 'general-purpose', is_success: false },
    ]],
  ])('%s', (_label, records, events) => {
    expect(typed(lines(...records))).toEqual(events);
  });

  it('a view that failed or got no result says neither file nor directory: unknown with its records', () => {
    const [call, result] = editor('e', { command: 'view', path: '/w/missing' }, 'The path /w/missing does not exist.', true);
    const cut = action('f', 'file_editor', { command: 'view', path: '/w/x', kind: 'FileEditorAction' });
    expect(typed(lines(call!, result!, cut))).toEqual([
      { type: 'unknown', raw: { ActionEvent: call, ObservationEvent: result } },
      { type: 'unknown', raw: cut },
    ]);
  });

  it('keys sent to a running command (is_input) are no command: unknown', () => {
    const records = terminal('c', 'C-c', -1, { is_input: true });
    expect(typed(lines(...records))).toEqual([{ type: 'unknown', raw: { ActionEvent: records[0], ObservationEvent: records[1] } }]);
  });

  it('a call OpenHands refused: its event fails with the error as a warning; an unknown tool is one unknown with both records', () => {
    const bad = action('r', 'file_editor', null, { tool_call: { id: 'r', name: 'file_editor', arguments: '{"command":"create","path":"/w/n.txt","file_text":"x"}' } });
    const badError = refused('r', 'file_editor', "Error validating tool 'file_editor': Failed to provide security_risk field");
    const unknownTool = action('u', 'nonexistent_tool', null);
    const unknownError = refused('u', 'nonexistent_tool', "Tool 'nonexistent_tool' not found.");
    expect(typed(lines(bad, badError, unknownTool, unknownError))).toEqual([
      { type: 'write', path: '/w/n.txt', is_success: false, tool_name: 'file_editor' },
      { type: 'warning', message: "OpenHands refused the file_editor call: Error validating tool 'file_editor': Failed to provide security_risk field", code: 'tool_call_refused' },
      { type: 'unknown', raw: { ActionEvent: unknownTool, AgentErrorEvent: unknownError } },
    ]);
  });

  it('finish is the answer and think is reasoning, both at the call; their observations restate them', () => {
    const { events, summary } = translateText(adapter, lines(
      action('k', 'think', { thought: 'Fine so far.', kind: 'ThinkAction' }), observation('k', 'think', { content: [text('Your thought has been logged.')], is_error: false, kind: 'ThinkObservation' }),
      action('f', 'finish', { message: 'All done.', kind: 'FinishAction' }), observation('f', 'finish', { content: [text('All done.')], is_error: false, kind: 'FinishObservation' }),
      ...finished,
    ));
    expect(strip(events).filter((e) => e.type !== 'unknown')).toEqual([{ type: 'reasoning', message: 'Fine so far.' }, { type: 'agent', message: 'All done.' }]);
    expect(summary.result.final_text).toBe('All done.');
  });

  it('a call without a result at the end is reported without an outcome; a subagent’s start stands alone', () => {
    const [cmd] = terminal('c', 'sleep 600', null);
    const [sub] = task('t', 'completed', false);
    expect(typed(lines(cmd!, sub!))).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: 't', subagent_name: 'general-purpose' },
      { type: 'command', command: 'sleep 600', tool_name: 'terminal' },
    ]);
  });

  it('finding 9: a reused call id reports the first call too (without an outcome); the result pairs with the latest', () => {
    const [first] = terminal('T1', 'rm -rf /important', 0);
    const [second, result] = terminal('T1', 'echo harmless', 0);
    expect(typed(lines(first!, second!, result!))).toEqual([
      { type: 'command', command: 'rm -rf /important', tool_name: 'terminal' },
      { type: 'command', command: 'echo harmless', exit_code: 0, is_success: true, tool_name: 'terminal' },
    ]);
  });

  it('a result whose call never came is unknown at the end', () => {
    const orphan = observation('x', 'terminal', { content: [], is_error: false, command: 'ls', exit_code: 0, kind: 'TerminalObservation' });
    expect(typed(lines(orphan))).toEqual([{ type: 'unknown', raw: orphan }]);
  });
});

describe('openhands adapter: tool names that are Object properties (issue 19, finding 9)', () => {
  const session = (name: string) => lines(action('t1', name, { x: 1, kind: 'MCPToolAction' }), observation('t1', name, { content: [text('ok')], is_error: false, kind: 'MCPToolObservation' }));
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'])('a tool named %s is "other" and its call comes out as one unknown, like a tool no harness has', (name) => {
    const { events } = translateText(adapter, session(name));
    const baseline = translateText(adapter, session('tool_no_harness_has')).events;
    expect(strip(events)).toEqual(JSON.parse(JSON.stringify(strip(baseline)).replaceAll('"tool_no_harness_has"', JSON.stringify(name))));
    expect(strip(events)).toEqual([expect.objectContaining({ type: 'unknown' })]);
    expect(openHandsToolKind(name)).toBe('other');
  });
});

describe('openhands adapter: messages, errors, text', () => {
  it('an action’s visible text -> agent, its reasoning -> reasoning; Anthropic thinking blocks only when reasoning_content is empty', () => {
    const withBoth = action('c', 'terminal', { command: 'ls', kind: 'TerminalAction' }, { thought: [text('Listing.')], reasoning_content: 'Look first.', thinking_blocks: [{ type: 'thinking', thinking: 'Look first.', signature: 's' }] });
    const blocksOnly = said('Done.', { thinking_blocks: [{ type: 'thinking', thinking: 'Wrap up.', signature: 's' }, { type: 'redacted_thinking', data: 'x' }] });
    expect(typed(lines(withBoth, blocksOnly))).toEqual([
      { type: 'reasoning', message: 'Look first.' },
      { type: 'agent', message: 'Listing.' },
      { type: 'reasoning', message: 'Wrap up.' },
      { type: 'unknown', raw: { type: 'redacted_thinking', data: 'x' } },
      { type: 'agent', message: 'Done.' },
      { type: 'command', command: 'ls', tool_name: 'terminal' },
    ]);
  });

  it('the final answer is the last agent message once "Agent finished" came, and not when a call followed it', () => {
    expect(translateText(adapter, lines(prompt, said('Answer.'), ...finished)).summary.result.final_text).toBe('Answer.');
    expect(translateText(adapter, lines(prompt, said('Answer.'))).summary.result.final_text).toBeUndefined();
    expect(translateText(adapter, lines(prompt, said('Step.'), ...terminal('c', 'ls', 0), ...finished)).summary.result.final_text).toBeUndefined();
  });

  it('a ConversationErrorEvent is an error and the verdict, even when its fields are unreadable', () => {
    const error = { id: 'x', source: 'environment', code: 'LLMRateLimitError', detail: 'litellm.RateLimitError: 429', kind: 'ConversationErrorEvent' };
    const read = translateText(adapter, lines(prompt, error));
    expect(strip(read.events).filter((e) => e.type === 'error')).toEqual([{ type: 'error', message: 'litellm.RateLimitError: 429', code: 'LLMRateLimitError' }]);
    expect(read.summary.result.is_error).toBe(true);
    const unreadable = translateText(adapter, lines(prompt, { ...error, detail: 7 }), { reports: { [STATE_SIDE_FILE]: stateFile({}, 'finished') } });
    expect(unreadable.summary.result.is_error).toBe(true);
  });

  it.each([['error', true], ['stuck', true], ['finished', false], ['paused', undefined], ['running', undefined]])('execution_status %s -> is_error %s', (status, verdict) => {
    expect(translateText(adapter, lines(prompt, said('x'), ...finished), { reports: { [STATE_SIDE_FILE]: stateFile({}, status) } }).summary.result.is_error).toBe(verdict);
  });

  it('text lines: one unknown per run of them; the model, the conversation id (styled or not) and "Agent finished" are read', () => {
    const ESC = String.fromCharCode(27);
    const { events, summary } = translateText(adapter, lines('Initializing agent...', `${ESC}[32m✓ Agent initialized with model: openrouter/qwen/qwen3-coder${ESC}[0m`, prompt, 'Agent is working', said('Hi.'), 'Agent finished', `${ESC}[36mConversation ID: 0123456789abcdef0123456789abcdef${ESC}[0m`));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: `Initializing agent...\n${ESC}[32m✓ Agent initialized with model: openrouter/qwen/qwen3-coder${ESC}[0m\nAgent is working` },
      { type: 'agent', message: 'Hi.' },
      { type: 'unknown', raw: `Agent finished\n${ESC}[36mConversation ID: 0123456789abcdef0123456789abcdef${ESC}[0m` },
    ]);
    expect(summary.result).toMatchObject({ session_id: '0123456789abcdef0123456789abcdef', reported_model: 'openrouter/qwen/qwen3-coder', final_text: 'Hi.' });
    // Events after the id carry it.
    expect(events.at(-1)).toMatchObject({ session_id: '0123456789abcdef0123456789abcdef' });
  });

  it('a record it cannot read is unknown, never dropped', () => {
    const records = [
      { no: 'kind' },
      { kind: 'Condensation', forgotten_event_ids: [] },
      { ...said('x'), source: 'environment' },
      { ...said('x'), llm_message: { role: 'assistant', content: 'not parts' } },
      { ...action('c', 'terminal', { command: 'ls' }), tool_call_id: 5 },
      { ...observation('c', 'terminal', {}), observation: { kind: 'TerminalObservation', is_error: 'no', content: [] } },
      { ...refused('c', 'terminal', 'x'), error: null },
      [1, 2],
    ];
    const { events } = translateText(adapter, records.map((r) => JSON.stringify(r)).join('\n'));
    expect(events.map((e) => e.type)).toEqual(records.map(() => 'unknown'));
  });
});

describe('openhands adapter: usage and cost', () => {
  it('input is prompt_tokens less cache reads and writes; entries (agent, condenser, task:*) are summed; reasoning stays within output', () => {
    const read = openHandsState(stateFile({ agent: metrics(1000, 100, 300, 50, 20), condenser: metrics(200, 30), 'task:t1': metrics(100, 10, 40, 0, 2) }));
    expect(read.tokens).toEqual({ input: 910, output: 140, cache_read: 340, cache_write: 50, reasoning: 22 });
    expect(read.unreadable).toEqual([]);
  });

  it('LiteLLM’s estimate is kept only when it priced something: 0 means no price, not a free run', () => {
    expect(openHandsState(stateFile({ agent: metrics(10, 1, 0, 0, 0, 0.0125), condenser: metrics(0, 0) })).estimatedCostUsd).toBeCloseTo(0.0125, 12);
    expect(openHandsState(stateFile({ agent: metrics(10, 1) })).estimatedCostUsd).toBeNull();
    const { summary } = translateText(adapter, lines(prompt), { reports: { [STATE_SIDE_FILE]: stateFile({ agent: metrics(10, 1, 0, 0, 0, 0.0125) }) } });
    expect(summary.result.reported_cost_usd).toBeNull();
    expect(summary.result.raw_usage).toMatchObject({ estimated_cost_usd: 0.0125, execution_status: 'finished' });
  });

  it.each([
    ['a string count', { prompt_tokens: '1000' }, 'prompt_tokens', { input: null, output: 100 }],
    ['a float cache read (input is computed from it too)', { cache_read_tokens: 1.5 }, 'cache_read_tokens', { input: null, cache_read: null, output: 100 }],
    ['a null reasoning count', { reasoning_tokens: null }, 'reasoning_tokens', { reasoning: null, input: 1000 }],
  ])('finding 7: %s makes its class null for the session, with a warning naming the field', (_label, bad, field, tokens) => {
    const broken = metrics(1000, 100);
    const file = stateFile({ agent: { ...broken, accumulated_token_usage: { ...broken.accumulated_token_usage, ...bad } } });
    const { events, summary } = translateText(adapter, lines(prompt), { reports: { [STATE_SIDE_FILE]: file } });
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`base_state.json.stats.usage_to_metrics.agent.accumulated_token_usage.${field}`) }]);
    expect(summary.result.tokens).toMatchObject(tokens);
  });

  it('a state file that is no JSON, or has no stats, gives unknown usage with a warning', () => {
    for (const file of ['{"stats": tru', JSON.stringify({ execution_status: 'finished' })]) {
      const { events, summary } = translateText(adapter, lines(prompt), { reports: { [STATE_SIDE_FILE]: file } });
      expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining('openhands usage: unreadable base_state.json.') }]);
      expect(summary.result).toMatchObject({ tokens: null, raw_usage: null });
    }
  });

  it('an LLM that never answered (no accumulated usage yet) adds nothing; no LLM at all is unknown usage', () => {
    expect(openHandsState(stateFile({ agent: metrics(10, 1), condenser: { model_name: 'x', accumulated_cost: 0, accumulated_token_usage: null } })).tokens).toEqual({ input: 10, output: 1, cache_read: 0, cache_write: 0, reasoning: 0 });
    expect(openHandsState(stateFile({})).tokens).toBeNull();
  });
});

describe('openhands adapter: invocation and manifest', () => {
  it('headless JSON mode with env overrides; the prompt as --task=, safe from being read as an option; the state file as a side file', () => {
    const inv = adapter.invocation({ model: 'anthropic/claude-sonnet-4.5', prompt: '-starts like an option', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['openhands', '--headless', '--json', '--override-with-envs', '--task=-starts like an option']);
    expect(inv.stdin).toBe('close');
    expect(inv.env).toEqual({ ...manifest.env, LLM_MODEL: 'openrouter/anthropic/claude-sonnet-4.5' });
    expect(inv.env).not.toHaveProperty('LLM_API_KEY');
    expect(inv.env).not.toHaveProperty('LLM_BASE_URL');
    expect(inv.files).toEqual([]);
    expect(inv.sideFiles).toEqual([{ name: STATE_SIDE_FILE, path: STATE_PATH, read: 'document' }]);
    expect(STATE_PATH).toBe('.openhands/conversations/*/base_state.json');
  });

  it('a base URL is LLM_BASE_URL <base>/v1; a continued session resumes its conversation', () => {
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9/', resumeSessionId: '0123456789abcdef0123456789abcdef' });
    expect(inv.env).toMatchObject({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'openrouter/mock-model' });
    expect(inv.argv.at(-1)).toBe('--resume=0123456789abcdef0123456789abcdef');
  });

  it('model ids: OpenRouter ids get LiteLLM’s openrouter/ prefix once', () => {
    expect(liteLlmModel('qwen/qwen3-coder')).toBe('openrouter/qwen/qwen3-coder');
    expect(liteLlmModel('openrouter/qwen/qwen3-coder')).toBe('openrouter/qwen/qwen3-coder');
  });

  it('the key is injected as LLM_API_KEY from an OpenRouter key, through the gateway’s OpenRouter provider; usage is the thread’s', () => {
    expect(manifest.auth.api_key).toMatchObject({ host_vars: ['OPENROUTER_API_KEY'], inject_as: 'LLM_API_KEY' });
    expect(manifest.gateway).toEqual({ providers: { OPENROUTER_API_KEY: 'openrouter' } });
    expect(adapter.usageScope).toBe('thread');
    expect(manifest.env).toMatchObject({ LITELLM_LOCAL_MODEL_COST_MAP: 'True', OPENHANDS_SUPPRESS_BANNER: '1' });
  });

  it('the probe reads the CLI’s own version, not the version a deprecation warning on stderr names', () => {
    const probe = 'authlib.jose module is deprecated, please use joserfc instead.\nIt will be compatible before version 2.0.0.\n  from authlib.jose import JsonWebKey, jwt\nOpenHands CLI 1.16.0\n';
    expect(parseVersion(manifest, probe)).toBe('1.16.0');
  });

  it('installs the newest release with uv into the run’s prefix, with a Python in its Requires-Python, never a downloaded one', () => {
    const command = manifest.install!.command.join(' ');
    expect(command).toContain("uv tool install --force --python '>=3.12,<3.13' openhands@latest");
    expect(command).toContain('UV_PYTHON_DOWNLOADS=never');
    for (const dir of ['UV_TOOL_DIR', 'UV_TOOL_BIN_DIR', 'UV_CACHE_DIR', 'UV_PYTHON_INSTALL_DIR']) expect(command).toMatch(new RegExp(`${dir}='\\{prefix\\}/`));
    expect(manifest.install!.hosts).toEqual(['pypi.org', 'files.pythonhosted.org']);
  });
});
