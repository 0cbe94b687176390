import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import { LineSplitter } from '../../shared/translate/lines.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { HarnessEvent as HarnessEventSchema } from '../../shared/events.ts';
import grokAdapter, { UPDATES_PATH } from './adapter.ts';
import { grokToolKind } from './map-grok-tools.ts';
import { UPDATES } from './translator.ts';
import { FIXED_CLOCK, strip } from '../../test/support/translate-fixture.ts';

const adapter = grokAdapter(getHarness('grok').manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const read = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const W = '/w';
const MAIN = '01a249bf-bbe1-75f3-844f-7b02c989b772';
const CHILD = '01a251f0-b19b-7681-bc9a-e16c487d8f78';

/** One source's text: stdout, or the updates side file. */
type Source = ['out' | 'side', string];

/** Runs sources through the real engine in the order given (lines of side files and stdout interleave live). */
function run(sources: Source[], options: { workdir?: string; exitCode?: number } = {}) {
  const session = new TranslationSession(adapter, { workdir: options.workdir ?? W }, { clock: FIXED_CLOCK });
  const events: HarnessEvent[] = [];
  for (const [source, text] of sources) {
    const splitter = new LineSplitter();
    for (const line of [...splitter.push(text), ...splitter.end()]) events.push(...(source === 'out' ? session.stdout(line) : session.side(UPDATES, line)));
  }
  const finished = session.finish({ code: options.exitCode ?? 0, signal: null });
  events.push(...finished.events);
  for (const event of events) expect(HarnessEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
  return { events, stripped: strip(events), result: finished.summary.result };
}
const jsonl = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
const out = (...records: object[]): Source => ['out', jsonl(...records)];
const side = (...records: object[]): Source => ['side', jsonl(...records)];

// Records in Grok 0.2.111's shapes (fixtures/grok-0.2.111-*.updates, grok-0.2.111-*.jsonl).
const upd = (update: object, sessionId = MAIN, method = 'session/update') => ({ timestamp: 1796533632, method, params: { sessionId, update } });
const message = (text: string, sessionId = MAIN) => upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }, sessionId);
const thought = (text: string, sessionId = MAIN) => upd({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text } }, sessionId);
const toolCall = (id: string, name: string, rawInput: object, sessionId = MAIN) =>
  upd({ sessionUpdate: 'tool_call', toolCallId: id, title: name, rawInput, _meta: { 'x.ai/tool': { version: 1, name, kind: 'other', namespace: 'grok_build' } } }, sessionId);
const toolUpdate = (id: string, status: string | undefined, rawOutput?: object, sessionId = MAIN) => upd({ sessionUpdate: 'tool_call_update', toolCallId: id, ...(status ? { status } : {}), ...(rawOutput ? { rawOutput } : {}) }, sessionId);
const call = (id: string, name: string, rawInput: object, status = 'completed', rawOutput?: object) => [toolCall(id, name, rawInput), toolUpdate(id, status, rawOutput)];
const xai = (update: object, sessionId = MAIN) => upd(update, sessionId, '_x.ai/session/update');
const usage = { input_tokens: 200, cache_read_input_tokens: 40, output_tokens: 30, reasoning_tokens: 6, total_tokens: 270 };
const end = (extra: object = {}) => ({ type: 'end', stopReason: 'EndTurn', sessionId: MAIN, requestId: 'r', usage, num_turns: 2, modelUsage: { 'grok-code-fast-1': { inputTokens: 200 } }, ...extra });

describe('grok adapter: recorded transcripts', () => {
  it('0.2.111 reference sample: the failed command from updates.jsonl, the answer once, usage from end', () => {
    const { stripped, result } = run([['out', read('grok-0.2.111-streaming-json.jsonl')], ['side', read('grok-0.2.111-streaming-json.updates')]]);
    // The stub's call lacked run_terminal_command's required `description`: Grok failed it without running it.
    expect(stripped).toEqual([
      { type: 'command', command: 'echo hi-from-stub', is_success: false, tool_name: 'run_terminal_command' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    expect(result).toMatchObject({
      session_id: MAIN,
      // input_tokens is uncached (turn_completed's inputTokens, 240, includes the 40 cached).
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: null, reasoning: 6 },
      reported_cost_usd: null,
      reported_model: 'stub-model',
      is_error: false,
      final_text: 'Stub says: done.',
    });
  });

  it('stdout alone (no updates.jsonl line read): the text is published from stdout, with a warning; no final text', () => {
    const { stripped, result } = run([['out', read('grok-0.2.111-streaming-json.jsonl')]]);
    expect(stripped).toEqual([
      { type: 'warning', message: expect.stringMatching(/updates\.jsonl/), code: 'side_file_missing' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    expect(result.tokens).toEqual({ input: 200, output: 30, cache_read: 40, cache_write: null, reasoning: 6 });
    expect(result.final_text).toBeUndefined();
  });

  // Recorded by `tcab harnesses verify grok --record` (scenarios/tools.json) against the newest release.
  // The run's own paths and ids, as recorded.
  const toolsUpdates = read('grok-0.2.111-tools.updates');
  const WS = /"current_dir":"([^"]+)"/.exec(toolsUpdates)![1]!;
  const SUB = /"sessionUpdate":"subagent_spawned","subagent_id":"([^"]+)"/.exec(toolsUpdates)![1]!;
  const SESSION = /"sessionId":"([^"]+)"/.exec(read('grok-0.2.111-tools.jsonl'))![1]!;
  it('0.2.111 tools scenario: every tool mapped, the subagent from its own records, the answer, usage incl. the subagent’s', () => {
    const { events, stripped, result } = run([['out', read('grok-0.2.111-tools.jsonl')], ['side', toolsUpdates]], { workdir: WS });
    expect(stripped).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', working_directory: WS, exit_code: 0, is_success: true, tool_name: 'run_terminal_command' },
      { type: 'write', path: `${WS}/hello.txt`, is_success: true, tool_name: 'write' },
      { type: 'read', path: `${WS}/hello.txt`, start_line: 2, end_line: 2, is_success: true, tool_name: 'read_file' },
      { type: 'write', path: `${WS}/hello.txt`, is_success: true, tool_name: 'search_replace' },
      { type: 'list', path: WS, is_success: true, tool_name: 'list_dir' },
      { type: 'search', query: 'there', path: WS, is_success: true, tool_name: 'grep' },
      // `completed` only says the tool ran: the exit code is the verdict.
      { type: 'command', command: 'exit 3', working_directory: WS, exit_code: 3, is_success: false, tool_name: 'run_terminal_command' },
      { type: 'read', path: `${WS}/missing.txt`, is_success: false, tool_name: 'read_file' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: SUB, subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: SUB, subagent_name: 'general-purpose', is_success: true },
      { type: 'agent', message: 'All done.' },
      // The subagent's answer, from its own session's updates.jsonl (stdout printed it as main text).
      { type: 'agent', message: 'The subagent says hi.' },
    ]);
    // Every event carries the main session's id, the subagent's too (its own session id is its subagent_id).
    expect(new Set(events.map((e) => (e as { session_id?: string }).session_id))).toEqual(new Set([SESSION]));
    expect(SUB).not.toBe(SESSION);
    // Eleven model calls (ten main, one subagent) of the stub's {900 uncached, 300 cached, 80 output, 12 reasoning}.
    expect(result).toMatchObject({ tokens: { input: 9900, output: 880, cache_read: 3300, cache_write: null, reasoning: 132 }, final_text: 'All done.', is_error: false });
  });

  it('the same recording with stdout read first (as live, the side file lagging): the same events', () => {
    const sideFirst = run([['side', toolsUpdates], ['out', read('grok-0.2.111-tools.jsonl')]]).stripped;
    const stdoutFirst = run([['out', read('grok-0.2.111-tools.jsonl')], ['side', toolsUpdates]]).stripped;
    expect(stdoutFirst).toEqual(sideFirst);
  });

  it('0.2.111 HTTP 400: stdout’s error (once: retry_state and turn_completed restate it), the session id from updates.jsonl, no usage', () => {
    const { stripped, result } = run([['out', read('grok-0.2.111-api-error.jsonl')], ['side', read('grok-0.2.111-api-error.updates')]], { exitCode: 1 });
    expect(stripped.filter((e) => e.type !== 'error')).toEqual([]);
    expect(stripped.filter((e) => e.type === 'error')[0]).toEqual({ type: 'error', message: expect.stringContaining('mock bad request') });
    expect(result).toMatchObject({ session_id: /"sessionId":"([^"]+)"/.exec(read('grok-0.2.111-api-error.updates'))![1], tokens: null, is_error: true });
  });
});

describe('grok adapter: tools', () => {
  it.each([
    ['run_terminal_command', 'command'], ['run_terminal_cmd', 'command'], ['read_file', 'read'], ['write', 'write'], ['search_replace', 'write'],
    ['list_dir', 'list'], ['grep', 'search'], ['spawn_subagent', 'subagent'], ['todo_write', 'other'], ['web_search', 'other'], ['use_tool', 'other'],
    ['constructor', 'other'], ['__proto__', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(grokToolKind(name)).toBe(kind);
  });

  const bash = (exit: object) => ({ type: 'Bash', command: 'x', current_dir: '/w/sub', ...exit });
  it.each([
    ['a command that exited 0', call('c', 'run_terminal_command', { command: 'ls', description: 'd' }, 'completed', bash({ exit_code: 0 })),
      [{ type: 'command', command: 'ls', working_directory: '/w/sub', exit_code: 0, is_success: true, tool_name: 'run_terminal_command' }]],
    ['a command that exited 2', call('c', 'run_terminal_command', { command: 'false', description: 'd' }, 'completed', bash({ exit_code: 2 })),
      [{ type: 'command', command: 'false', working_directory: '/w/sub', exit_code: 2, is_success: false, tool_name: 'run_terminal_command' }]],
    ['a command that timed out', call('c', 'run_terminal_command', { command: 'sleep 9', description: 'd' }, 'completed', bash({ exit_code: 0, timed_out: true })),
      [{ type: 'command', command: 'sleep 9', working_directory: '/w/sub', exit_code: 0, is_success: false, tool_name: 'run_terminal_command' }]],
    ['a completed command without an exit code: no verdict claimed', call('c', 'run_terminal_command', { command: 'bg', description: 'd' }, 'completed', { type: 'Background' }),
      [{ type: 'command', command: 'bg', tool_name: 'run_terminal_command' }]],
    ['a read of a range', call('c', 'read_file', { target_file: 'a.txt', offset: 3, limit: 10 }, 'completed', { type: 'ReadFile', FileContent: { total_lines: 7 } }),
      [{ type: 'read', path: '/w/a.txt', start_line: 3, end_line: 7, is_success: true, tool_name: 'read_file' }]],
    ['a whole read: no range claimed', call('c', 'read_file', { target_file: '/abs/a.txt' }, 'completed', { type: 'ReadFile', FileContent: { total_lines: 7 } }),
      [{ type: 'read', path: '/abs/a.txt', is_success: true, tool_name: 'read_file' }]],
    ['a failed read: no range', call('c', 'read_file', { target_file: 'a.txt', offset: 3, limit: 1 }, 'failed', { type: 'ReadFile', FileNotFound: 'x' }),
      [{ type: 'read', path: '/w/a.txt', is_success: false, tool_name: 'read_file' }]],
    ['a write', call('c', 'write', { file_path: 'n.txt', content: 'x' }), [{ type: 'write', path: '/w/n.txt', is_success: true, tool_name: 'write' }]],
    ['an edit', call('c', 'search_replace', { file_path: 'n.txt', old_string: 'a', new_string: 'b' }), [{ type: 'write', path: '/w/n.txt', is_success: true, tool_name: 'search_replace' }]],
    ['a listing', call('c', 'list_dir', { target_directory: 'src' }), [{ type: 'list', path: '/w/src', is_success: true, tool_name: 'list_dir' }]],
    ['a grep', call('c', 'grep', { pattern: 'TODO', path: 'src' }), [{ type: 'search', query: 'TODO', path: '/w/src', is_success: true, tool_name: 'grep' }]],
  ])('%s', (_label, records, expected) => {
    expect(run([side(...records)]).stripped).toEqual(expected);
  });

  it('the input Grok normalized in a later update is read; progress updates say nothing on their own', () => {
    const { stripped } = run([side(toolCall('c', 'run_terminal_command', {}), toolUpdate('c', undefined, undefined), upd({ sessionUpdate: 'tool_call_update', toolCallId: 'c', rawInput: { variant: 'Bash', command: 'pwd' } }), toolUpdate('c', 'in_progress', bash({ exit_code: 0 })), toolUpdate('c', 'completed', bash({ exit_code: 0 })))]);
    expect(stripped).toEqual([{ type: 'command', command: 'pwd', working_directory: '/w/sub', exit_code: 0, is_success: true, tool_name: 'run_terminal_command' }]);
  });

  it('other tools and calls whose arguments fail their schema are unknown with their records', () => {
    const todo = call('c1', 'todo_write', { todos: [] });
    const badArgs = call('c2', 'read_file', { target_file: 7 });
    const { stripped } = run([side(...todo, ...badArgs)]);
    expect(stripped).toEqual([todo, badArgs].map(([c, u]) => ({ type: 'unknown', raw: { tool_call: c!.params.update, tool_call_update: u!.params.update } })));
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('a tool named %s (an Object property) is unknown, never a kind', (name) => {
    const records = call('c', name, { command: 'ls', target_file: 'a', file_path: 'b', pattern: 'p' });
    expect(run([side(...records)]).stripped).toEqual([{ type: 'unknown', raw: { tool_call: records[0]!.params.update, tool_call_update: records[1]!.params.update } }]);
  });

  it('without the x.ai/tool name the tool_call title names the tool; without either the record is unknown', () => {
    const titled = upd({ sessionUpdate: 'tool_call', toolCallId: 'c', title: 'grep', rawInput: { pattern: 'x' } });
    const nameless = upd({ sessionUpdate: 'tool_call', toolCallId: 'd', rawInput: {} });
    expect(run([side(titled, toolUpdate('c', 'completed'), nameless)]).stripped).toEqual([
      { type: 'search', query: 'x', is_success: true, tool_name: 'grep' },
      { type: 'unknown', raw: nameless },
    ]);
  });

  it('a call whose outcome never came is reported at the end without one; an outcome before its call pairs with it', () => {
    const { stripped } = run([side(toolUpdate('b', 'completed'), toolCall('a', 'run_terminal_command', { command: 'sleep 99', description: 'd' }), toolCall('b', 'write', { file_path: 'x' }))]);
    expect(stripped).toEqual([
      { type: 'write', path: '/w/x', is_success: true, tool_name: 'write' },
      { type: 'command', command: 'sleep 99', tool_name: 'run_terminal_command' },
    ]);
  });

  it('a progress record of no known call is unknown; one of a call already reported is nothing new', () => {
    const stray = toolUpdate('zz', 'in_progress');
    const { stripped } = run([side(...call('a', 'write', { file_path: 'x' }), toolUpdate('a', 'in_progress'), stray)]);
    expect(stripped).toEqual([{ type: 'write', path: '/w/x', is_success: true, tool_name: 'write' }, { type: 'unknown', raw: stray }]);
  });

  it('the same toolCallId in the main session and a subagent’s are two calls', () => {
    const { stripped } = run([side(toolCall('call_1', 'write', { file_path: 'main.txt' }), toolCall('call_1', 'write', { file_path: 'sub.txt' }, CHILD), toolUpdate('call_1', 'completed', undefined, CHILD), toolUpdate('call_1', 'failed'))]);
    expect(stripped).toEqual([
      { type: 'write', path: '/w/sub.txt', is_success: true, tool_name: 'write' },
      { type: 'write', path: '/w/main.txt', is_success: false, tool_name: 'write' },
    ]);
  });
});

describe('grok adapter: subagents', () => {
  const spawn = (id: string, input: object = { prompt: 'p', description: 'greeter', subagent_type: 'explore' }) => toolCall(id, 'spawn_subagent', input);
  const spawned = xai({ sessionUpdate: 'subagent_spawned', subagent_id: CHILD, parent_session_id: MAIN, child_session_id: CHILD, subagent_type: 'explore', description: 'greeter' });
  const finished = (status: string) => xai({ sessionUpdate: 'subagent_finished', subagent_id: CHILD, child_session_id: CHILD, status, output: 'hi' });

  it('subagent_spawned / subagent_finished report it; its spawn_subagent call is no second report', () => {
    const { stripped } = run([side(spawn('k'), spawned, finished('completed'), toolUpdate('k', 'completed', { type: 'SubagentCompleted', subagent_id: CHILD }))]);
    expect(stripped).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: CHILD, subagent_name: 'explore' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: CHILD, subagent_name: 'explore', is_success: true },
    ]);
  });

  it('a subagent that failed', () => {
    expect(run([side(spawn('k'), spawned, finished('failed'), toolUpdate('k', 'failed'))]).stripped.at(-1)).toEqual({ type: 'orchestration', action: 'subagent_failed', subagent_id: CHILD, subagent_name: 'explore', is_success: false });
  });

  it('a spawn Grok refused (no subagent ran) is a failed subagent without an id', () => {
    const { stripped } = run([side(spawn('k', { prompt: 'p', description: 'greeter', subagent_type: 'general' }), toolUpdate('k', 'failed', { error: 'tool_execution_failed' }))]);
    expect(stripped).toEqual([{ type: 'orchestration', action: 'subagent_failed', subagent_name: 'general', is_success: false }]);
  });

  it('a spawn whose subagent records were never read: started (and completed, from its rawOutput)', () => {
    expect(run([side(spawn('k'), toolUpdate('k', 'completed', { type: 'SubagentCompleted', subagent_id: CHILD }))]).stripped).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: CHILD, subagent_name: 'explore' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: CHILD, subagent_name: 'explore', is_success: true },
    ]);
    expect(run([side(spawn('k'))]).stripped).toEqual([{ type: 'orchestration', action: 'subagent_started', subagent_name: 'explore' }]);
  });

  it('a status it does not know is unknown', () => {
    const odd = finished('paused');
    expect(run([side(spawn('k'), spawned, odd)]).stripped.at(-1)).toEqual({ type: 'unknown', raw: odd });
  });
});

describe('grok adapter: messages (updates.jsonl owns the text)', () => {
  it('chunks are joined into one message until the session’s next other record; a tool call ends it; stdout’s copy is not published again', () => {
    const { stripped, result } = run([
      out({ type: 'thought', data: 'Hmm' }, { type: 'text', data: 'Let me ' }, { type: 'text', data: 'look.' }, { type: 'text', data: 'Done.' }),
      side(thought('Hm'), thought('m'), message('Let me '), message('look.'), ...call('c', 'list_dir', { target_directory: '.' }), message('Done.'), xai({ sessionUpdate: 'turn_completed', stop_reason: 'end_turn' })),
      out(end()),
    ]);
    expect(stripped).toEqual([
      { type: 'reasoning', message: 'Hmm' },
      { type: 'agent', message: 'Let me look.' },
      { type: 'list', path: W, is_success: true, tool_name: 'list_dir' },
      { type: 'agent', message: 'Done.' },
    ]);
    expect(result.final_text).toBe('Done.');
  });

  it('a subagent’s text is its own message and never the final answer; text before the last tool call is no final answer', () => {
    const { stripped, result } = run([side(message('Working.'), ...call('c', 'list_dir', {})), side(message('child says', CHILD)), out(end())]);
    expect(stripped).toEqual([
      { type: 'agent', message: 'Working.' },
      { type: 'list', is_success: true, tool_name: 'list_dir' },
      { type: 'agent', message: 'child says' },
    ]);
    expect(result.final_text).toBeUndefined();
  });

  it('no final answer when the turn did not end normally', () => {
    const { stripped, result } = run([side(message('partial')), out(end({ stopReason: 'MaxTokens' }))]);
    expect(stripped).toEqual([{ type: 'warning', message: 'Grok stopped: MaxTokens', code: 'stop_reason' }, { type: 'agent', message: 'partial' }]);
    expect(result.final_text).toBeUndefined();
    expect(result.is_error).toBeUndefined();
  });

  it('records it cannot read are unknown, never dropped; other side files are not its', () => {
    const image = upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'x' } });
    const plan = upd({ sessionUpdate: 'plan', entries: [] });
    const noSession = { method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk' } } };
    const { stripped } = run([side(message('a'), image, plan, noSession), out({ type: 'mystery' }, { type: 'text', data: 7 })]);
    expect(stripped).toEqual([
      { type: 'agent', message: 'a' },
      { type: 'unknown', raw: image },
      { type: 'unknown', raw: plan },
      { type: 'unknown', raw: noSession },
      { type: 'unknown', raw: { type: 'mystery' } },
      { type: 'unknown', raw: { type: 'text', data: 7 } },
    ]);
    const session = new TranslationSession(adapter, {}, { clock: FIXED_CLOCK });
    expect(strip(session.side('other', { text: JSON.stringify(message('x')), bytes: 10, truncated: false }))).toEqual([{ type: 'unknown', raw: message('x') }]);
  });

  it('stdout’s error, retries, max turns and compactions', () => {
    const { stripped, result } = run([
      side(xai({ sessionUpdate: 'retry_state', type: 'retrying', message: 'HTTP 429' }), xai({ sessionUpdate: 'retry_state', type: 'failed', message: 'HTTP 429' })),
      out({ type: 'max_turns_reached' }, { type: 'auto_compact_started' }, { type: 'error', message: 'Couldn’t start session' }),
    ]);
    expect(stripped).toEqual([
      { type: 'warning', message: 'Grok model request retrying: HTTP 429', code: 'retry' },
      { type: 'warning', message: 'Grok stopped: the maximum number of turns was reached', code: 'max_turns_reached' },
      { type: 'warning', message: expect.stringMatching(/compact started: the compaction's model call is not counted/), code: 'auto_compact_started' },
      { type: 'error', message: 'Couldn’t start session' },
    ]);
    expect(result.is_error).toBe(true);
  });
});

describe('grok adapter: usage and cost', () => {
  it('end: uncached input, cache reads, output with its reasoning part; the reported cost when present', () => {
    const { result } = run([out(end({ total_cost_usd: 0.0126, total_cost_usd_ticks: 126000000 }))]);
    expect(result).toMatchObject({ tokens: { input: 200, output: 30, cache_read: 40, cache_write: null, reasoning: 6 }, reported_cost_usd: 0.0126, reported_model: 'grok-code-fast-1', session_id: MAIN });
    expect(result.raw_usage).toMatchObject({ usage, num_turns: 2 });
  });

  it('no total_cost_usd (unreported or partial) is no cost, never $0', () => {
    expect(run([out(end({ cost_is_partial: true }))]).result.reported_cost_usd).toBeNull();
  });

  it('an unreadable count makes its class null, named in a warning', () => {
    const { stripped, result } = run([out(end({ usage: { ...usage, cache_read_input_tokens: '40' } }))]);
    expect(result.tokens).toEqual({ input: 200, output: 30, cache_read: null, cache_write: null, reasoning: 6 });
    expect(stripped).toContainEqual(expect.objectContaining({ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining('end.usage.cache_read_input_tokens') }));
  });

  it('usage Grok marks incomplete is unknown (null), kept raw', () => {
    const { stripped, result } = run([out(end({ usage_is_incomplete: true }))]);
    expect(result.tokens).toBeNull();
    expect(result.raw_usage).toMatchObject({ usage, usage_is_incomplete: true });
    expect(stripped).toContainEqual(expect.objectContaining({ type: 'warning', code: 'incomplete_usage' }));
  });

  it('a session cut before end has no usage', () => {
    expect(run([side(message('a'), xai({ sessionUpdate: 'turn_completed', stop_reason: 'end_turn', usage: { inputTokens: 240 } }))]).result.tokens).toBeNull();
  });
});

describe('grok adapter: invocation', () => {
  const invocation = (extra: object = {}) => adapter.invocation({ model: 'grok-code-fast-1', prompt: '-v is not a flag', workdir: '/ws', home: '/home/run/', ...extra });

  it('headless single prompt as one argument (a leading - is no option), streaming JSON, auto-approve, no update check', () => {
    const inv = invocation();
    expect(inv.argv).toEqual(['grok', '--single=-v is not a flag', '-m', 'grok-code-fast-1', '--output-format', 'streaming-json', '--always-approve', '--no-auto-update']);
    expect(inv.stdin).toBe('close');
    expect(inv.files).toEqual([]);
    expect(inv.env).toMatchObject({ GROK_HOME: '/home/run/.grok', GROK_SESSION_SUMMARY_MODEL: 'grok-code-fast-1', GROK_DISABLE_AUTOUPDATER: '1' });
    expect(inv.env.GROK_MODELS_BASE_URL).toBeUndefined();
    expect(Object.keys(inv.env)).not.toContain('XAI_API_KEY');
  });

  it('tails every session’s updates.jsonl below the run HOME’s .grok', () => {
    expect(invocation().sideFiles).toEqual([{ name: UPDATES, path: '.grok/sessions/*/*/updates.jsonl', read: 'lines' }]);
    expect(UPDATES_PATH.startsWith(`${invocation().env.GROK_HOME!.slice('/home/run/'.length)}/`)).toBe(true);
  });

  it('a base URL becomes GROK_MODELS_BASE_URL <base>/v1; a continued session resumes by id', () => {
    const inv = invocation({ baseUrl: 'http://127.0.0.1:9/', resumeSessionId: MAIN });
    expect(inv.env.GROK_MODELS_BASE_URL).toBe('http://127.0.0.1:9/v1');
    expect(inv.argv.slice(-2)).toEqual(['--resume', MAIN]);
  });
});

describe('grok adapter: hostile updates.jsonl lines (the property suite feeds stdout only)', () => {
  const WRONG: unknown[] = [7, null, [], {}, '', 'x', true];
  const recorded = read('grok-0.2.111-tools.updates').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as { params: { update: Record<string, unknown> } });

  it('every field of every record of the recording, each replaced by a wrong type: nothing thrown, every event valid', () => {
    let cases = 0;
    recorded.forEach((record, i) => {
      for (const key of Object.keys(record.params.update)) {
        for (const wrong of WRONG) {
          const lines = recorded.map((r, j) => (j === i ? { ...r, params: { ...r.params, update: { ...r.params.update, [key]: wrong } } } : r));
          const translator = adapter.createTranslator({ workdir: W });
          const events = lines.flatMap((l) => translator.sideLine!(UPDATES, { text: JSON.stringify(l), json: l }));
          events.push(...translator.finish().events);
          for (const event of events) expect(HarnessEventSchema.safeParse({ timestamp: FIXED_CLOCK.now().toISOString(), ...event }).success, `${i}.${key}=${JSON.stringify(wrong)}: ${JSON.stringify(event)}`).toBe(true);
          cases += 1;
        }
      }
    });
    expect(cases).toBeGreaterThan(500);
  });

  it('a wrong-typed exit code or status claims no verdict', () => {
    const { stripped } = run([side(...call('c', 'run_terminal_command', { command: 'ls', description: 'd' }, 'completed', { exit_code: '0' }), ...call('d', 'write', { file_path: 'x' }, 'done'))]);
    expect(stripped).toEqual([
      { type: 'command', command: 'ls', tool_name: 'run_terminal_command' },
      { type: 'write', path: '/w/x', tool_name: 'write' },
    ]);
  });
});
