import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import { LineSplitter } from '../../shared/translate/lines.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { HarnessEvent as HarnessEventSchema } from '../../shared/events.ts';
import kimiAdapter, { KIMI_HOME_DIR, OPENROUTER_BASE_URL, WIRE_PATH } from './adapter.ts';
import { kimiToolKind } from './map-kimi-tools.ts';
import { WIRE } from './translator.ts';
import { MAX_RAW_RECORD_CHARS, MAX_USAGE_RECORDS } from './usage.ts';
import { FIXED_CLOCK, strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = kimiAdapter(getHarness('kimi').manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => join(fixtures, name);
const read = (name: string) => readFileSync(fixture(name), 'utf8');
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
const W = '/w';

/**
 * One piece of text as the driver reads it: from stdout (`out`), or from a wire file (any other key: each file has
 * its own line splitter, so a piece may end mid-line and the next piece of that file completes it).
 */
type Piece = [string, string];

/** Runs pieces through the real engine in the order given (wire files and stdout interleave live). */
function run(pieces: Piece[], options: { workdir?: string; exitCode?: number } = {}) {
  const session = new TranslationSession(adapter, { workdir: options.workdir ?? W }, { clock: FIXED_CLOCK });
  const events: HarnessEvent[] = [];
  const splitters = new Map<string, LineSplitter>();
  const feed = (source: string, split: ReturnType<LineSplitter['end']>) => {
    for (const line of split) events.push(...(source === 'out' ? session.stdout(line) : session.side(WIRE, line)));
  };
  for (const [source, text] of pieces) {
    let splitter = splitters.get(source);
    if (!splitter) splitters.set(source, (splitter = new LineSplitter()));
    feed(source, splitter.push(text));
  }
  for (const [source, splitter] of splitters) feed(source, splitter.end());
  const finished = session.finish({ code: options.exitCode ?? 0, signal: null });
  events.push(...finished.events);
  for (const event of events) expect(HarnessEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
  return { events, stripped: strip(events), result: finished.summary.result };
}
/** A text cut into pieces of `size` characters. */
const cut = (source: string, text: string, size: number): Piece[] => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => [source, text.slice(i * size, (i + 1) * size)]);
/** Pieces of several sources, taken in turn (a poll of each file, then the next). */
function interleave(...sources: Piece[][]): Piece[] {
  const out: Piece[] = [];
  for (let i = 0; sources.some((s) => i < s.length); i++) for (const s of sources) if (i < s.length) out.push(s[i]!);
  return out;
}
const wireOf = (...records: string[]) => `${records.join('\n')}\n`;

// Records in Kimi Code 2.1.0's shapes (fixtures/kimi-code-2.1.0-stream-json.jsonl, kimi-code-2.1.0-wire.jsonl).
const version = { role: 'meta', type: 'system.version', version: '2.1.0' };
const hint = (id = 'session_1') => ({ role: 'meta', type: 'session.resume_hint', session_id: id, command: `kimi -r ${id}`, content: `To resume this session: kimi -r ${id}` });
const fn = (id: string, name: string, args: object | string) => ({ type: 'function', id, function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } });
const calls = (...entries: object[]) => ({ role: 'assistant', tool_calls: entries });
const result = (id: string, content: string) => ({ role: 'tool', tool_call_id: id, content });
const call = (id: string, name: string, args: object | string, out = 'ok') => [calls(fn(id, name, args)), result(id, out)];
const text = (content: string) => ({ role: 'assistant', content });
const wire = (type: string, time: number, extra: object = {}) => JSON.stringify({ type, agentId: 'main', time, ...extra });
const usageRecord = (time: number, inputOther: number, output: number, inputCacheRead = 0, inputCacheCreation = 0, agentId = 'main') =>
  JSON.stringify({ type: 'usage.record', agentId, model: '__kimi_env_model__', usage: { inputOther, output, inputCacheRead, inputCacheCreation }, usageScope: 'turn', time });
const stdout = (...records: object[]): Piece => ['out', lines(...records)];

describe('kimi adapter: recorded transcripts', () => {
  const sample = read('kimi-code-2.1.0-stream-json.jsonl');
  const sampleWire = read('kimi-code-2.1.0-wire.jsonl');

  it('2.1.0 reference sample: the command, the answer, the session id; usage from the wire file summed over both model calls', () => {
    const { stripped, result } = run([['out', sample], ['main', sampleWire]]);
    // The wire file's other records (profile, system prompt, context, requests) yield nothing.
    expect(stripped).toEqual([
      { type: 'command', command: 'echo hi-from-stub', tool_name: 'Bash' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    // Two usage.record lines of {inputOther 100, output 15, inputCacheRead 20, inputCacheCreation 0}.
    expect(result).toMatchObject({
      session_id: 'session_e46a02af-c20a-45a6-b08c-075a4dcca100',
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: 0, reasoning: null },
      reported_cost_usd: null,
      final_text: 'Stub says: done.',
    });
    expect((result.raw_usage as { usage_records: unknown[] }).usage_records).toEqual(sampleWire.split('\n').filter((l) => l.includes('"type":"usage.record"')).map((l) => JSON.parse(l)));
  });

  it('the same recording with the wire file first, or in odd-sized pieces interleaved with stdout: the same events and usage', () => {
    const whole = run([['out', sample], ['main', sampleWire]]);
    expect(run([['main', sampleWire], ['out', sample]]).stripped).toEqual(whole.stripped);
    const pieces = run(interleave(cut('out', sample, 97), cut('main', sampleWire, 1013)));
    expect(pieces.stripped).toEqual(whole.stripped);
    expect(pieces.result).toEqual(whole.result);
  });

  // Recorded by `tcab harnesses verify kimi --record` against the newest release.
  const recorded = readdirSync(fixtures);
  const tools = recorded.find((f) => /^kimi-\d.*-tools\.jsonl$/.test(f));
  const toolsWire = recorded.find((f) => /^kimi-\d.*-tools\.wire$/.test(f));
  const apiError = recorded.find((f) => /^kimi-\d.*-api-error\.jsonl$/.test(f));

  it.runIf(tools && toolsWire)('newest release, tools scenario: every tool mapped, TodoList unknown, usage from the wire side file', () => {
    const { stripped, result } = run([['out', read(tools!)], ['main', read(toolsWire!)]], { workdir: '/ws' });
    const kinds = stripped.map((e) => `${e.type}${e.tool_name ? `:${e.tool_name}` : ''}`);
    expect(kinds).toEqual(['agent', 'command:Bash', 'write:Write', 'read:Read', 'write:Edit', 'search:Glob', 'search:Grep', 'unknown', 'command:Bash', 'agent']);
    // stdout says nothing of a command's outcome Kimi vouches for (its failure line is text a command could print).
    expect(stripped.filter((e) => e.type === 'command')).toEqual([
      { type: 'command', command: 'ls -la && echo hi', tool_name: 'Bash' },
      { type: 'command', command: 'exit 3', tool_name: 'Bash' },
    ]);
    expect(stripped.find((e) => e.type === 'read')).toMatchObject({ path: '/ws/hello.txt' });
    // Nine model calls of the stub's {900 uncached, 300 cache read, 80 output}; no cache write on the chat wire.
    expect(result.tokens).toEqual({ input: 8100, output: 720, cache_read: 2700, cache_write: 0, reasoning: null });
    expect(result).toMatchObject({ final_text: 'All done.', reported_cost_usd: null });
    expect(result.session_id).toMatch(/^session_/);
  });

  it.runIf(apiError)('newest release, HTTP 400: only the version on stdout; no session id, no usage', () => {
    const { events, summary } = translateFixture(adapter, fixture(apiError!), { exitCode: 1 });
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(summary.result.session_id).toBeUndefined();
    expect(summary.result.tokens).toBeNull();
  });
});


describe('kimi adapter: tools', () => {
  it.each([
    ['Bash', 'command'], ['Read', 'read'], ['Write', 'write'], ['Edit', 'write'], ['Glob', 'search'], ['Grep', 'search'],
    ['Agent', 'subagent'], ['AgentSwarm', 'subagent'], ['Skill', 'other'], ['TodoList', 'other'], ['FetchURL', 'other'], ['bash', 'other'],
    ['constructor', 'other'], ['__proto__', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(kimiToolKind(name)).toBe(kind);
  });

  it.each([
    ['a command', call('c', 'Bash', { command: 'ls' }, 'a\nb\n'), [{ type: 'command', command: 'ls', tool_name: 'Bash' }]],
    ['a command in another directory', call('c', 'Bash', { command: 'ls', cwd: 'sub' }), [{ type: 'command', command: 'ls', working_directory: '/w/sub', tool_name: 'Bash' }]],
    ['a command whose output reads like Kimi’s failure line: no outcome claimed', call('c', 'Bash', { command: 'cat log' }, 'Command failed with exit code: 3.'), [{ type: 'command', command: 'cat log', tool_name: 'Bash' }]],
    ['a read', call('c', 'Read', { path: 'a.txt', n_lines: 2 }, '1\ta'), [{ type: 'read', path: '/w/a.txt', tool_name: 'Read' }]],
    ['a write', call('c', 'Write', { path: '/abs/n.txt', content: 'x' }), [{ type: 'write', path: '/abs/n.txt', tool_name: 'Write' }]],
    ['an edit', call('c', 'Edit', { path: 'n.txt', old_string: 'a', new_string: 'b' }), [{ type: 'write', path: '/w/n.txt', tool_name: 'Edit' }]],
    ['a glob', call('c', 'Glob', { pattern: '**/*.ts' }), [{ type: 'search', query: '**/*.ts', tool_name: 'Glob' }]],
    ['a grep in a directory', call('c', 'Grep', { pattern: 'TODO', path: 'src' }), [{ type: 'search', query: 'TODO', path: '/w/src', tool_name: 'Grep' }]],
    ['a subagent that returned', call('c', 'Agent', { prompt: 'p', description: 'look around', subagent_type: 'explore' }), [
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'c', subagent_name: 'explore' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'c', subagent_name: 'explore' },
    ]],
    ['a swarm', call('c', 'AgentSwarm', { description: 'fan out', items: [] }), [
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'c', subagent_name: 'fan out' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'c', subagent_name: 'fan out' },
    ]],
  ])('%s', (_label, records, expected) => {
    expect(strip(translateText(adapter, lines(version, ...records, hint()), { workdir: W }).events)).toEqual(expected);
  });

  it('Skill (it names no skill file), other tools, and calls whose arguments fail their schema are unknown with their records', () => {
    const skill = call('c1', 'Skill', { skill: 'demo' });
    const todo = call('c2', 'TodoList', { todos: [] });
    const notJson = call('c3', 'Bash', '{"command":');
    const badArgs = call('c4', 'Read', { path: 7 });
    const { events } = translateText(adapter, lines(...skill, ...todo, ...notJson, ...badArgs), { workdir: W });
    expect(strip(events)).toEqual([skill, todo, notJson, badArgs].map(([assistant, tool]) => ({
      type: 'unknown',
      raw: { assistant: (assistant as { tool_calls: object[] }).tool_calls[0], tool },
    })));
  });

  it('a call whose result never came is reported at the end without an outcome; an unmatched result is unknown', () => {
    const { events } = translateText(adapter, lines(calls(fn('a', 'Bash', { command: 'sleep 99' })), result('zz', 'stray')), { workdir: W });
    expect(strip(events)).toEqual([
      { type: 'command', command: 'sleep 99', tool_name: 'Bash' },
      { type: 'unknown', raw: result('zz', 'stray') },
    ]);
  });

  it('a subagent whose result never came only started', () => {
    const { events } = translateText(adapter, lines(calls(fn('a', 'Agent', { prompt: 'p', description: 'd' }))), { workdir: W });
    expect(strip(events)).toEqual([{ type: 'orchestration', action: 'subagent_started', subagent_id: 'a', subagent_name: 'd' }]);
  });

  it('two calls in one message pair with their results by id, in any order', () => {
    const { events } = translateText(adapter, lines(calls(fn('a', 'Read', { path: 'a' }), fn('b', 'Read', { path: 'b' })), result('b', 'B'), result('a', 'A')), { workdir: W });
    expect(strip(events).map((e) => e.path)).toEqual(['/w/b', '/w/a']);
  });

  it('a reused call id reports the first call without an outcome', () => {
    const { events } = translateText(adapter, lines(calls(fn('a', 'Bash', { command: 'one' })), calls(fn('a', 'Bash', { command: 'two' })), result('a', 'x')), { workdir: W });
    expect(strip(events).map((e) => e.command)).toEqual(['one', 'two']);
  });
});

describe('kimi adapter: messages and records', () => {
  it('text -> agent, reasoning_content and think parts -> reasoning; the final answer is the last text', () => {
    const { events, summary } = translateText(adapter, lines(
      { role: 'assistant', reasoning_content: 'hmm', content: 'first' },
      { role: 'assistant', content: [{ type: 'think', think: 'deep' }, { type: 'text', text: 'second' }] },
      hint('session_9'),
    ));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'hmm' },
      { type: 'agent', message: 'first' },
      { type: 'reasoning', message: 'deep' },
      { type: 'agent', message: 'second' },
    ]);
    expect(summary.result).toMatchObject({ session_id: 'session_9', final_text: 'second' });
    expect(events.every((e) => (e as { session_id?: string }).session_id === undefined)).toBe(true);
  });

  it('no final answer from a stream cut short, nor from a message that went on to call a tool', () => {
    expect(translateText(adapter, lines(text('an answer?'))).summary.result.final_text).toBeUndefined();
    const stepped = lines({ role: 'assistant', content: 'let me look', tool_calls: [fn('a', 'Bash', { command: 'ls' })] }, result('a', 'x'), hint());
    expect(translateText(adapter, stepped).summary.result.final_text).toBeUndefined();
  });

  it('the session id stamps the events after the resume hint', () => {
    const { events } = translateText(adapter, lines(hint('session_x'), text('late')));
    expect((events[0] as { session_id?: string }).session_id).toBe('session_x');
  });

  it('records it cannot read are unknown, never dropped', () => {
    const odd = [
      { role: 'user', content: 'echo' },
      { role: 'meta', type: 'something.new' },
      { role: 'meta', type: 'session.resume_hint' },
      { role: 'meta' },
      { role: 'assistant', content: 7 },
      { role: 'assistant', tool_calls: [{ id: 'x' }] },
      { role: 'tool', content: 'no id' },
      { nope: true },
    ];
    const { events } = translateText(adapter, `${lines(...odd)}\nnot json`);
    expect(strip(events)).toEqual([
      ...odd.slice(0, 5).map((raw) => ({ type: 'unknown', raw })),
      { type: 'unknown', raw: { id: 'x' } },
      ...odd.slice(6).map((raw) => ({ type: 'unknown', raw })),
      { type: 'unknown', raw: 'not json' },
    ]);
  });

  it('an unreadable content part is unknown; the others are kept', () => {
    const { events } = translateText(adapter, lines({ role: 'assistant', content: [{ type: 'image', url: 'x' }, { type: 'text', text: 'kept' }] }));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { type: 'image', url: 'x' } }, { type: 'agent', message: 'kept' }]);
  });
});

describe('kimi adapter: usage (the wire files’ usage.record lines, tailed as a side file)', () => {
  const tokensOf = (...pieces: Piece[]) => run([stdout(text('hi'), hint()), ...pieces]).result.tokens;

  it('maps inputOther/output/inputCacheRead/inputCacheCreation onto input/output/cache_read/cache_write, summed', () => {
    const { result, stripped } = run([stdout(text('hi'), hint()), ['main', wireOf(wire('turn.prompt', 1), usageRecord(2, 100, 10, 20, 5), usageRecord(3, 50, 5, 0, 0), wire('turn.ended', 4))]]);
    expect(result.tokens).toEqual({ input: 150, output: 15, cache_read: 20, cache_write: 5, reasoning: null });
    expect(stripped.filter((e) => e.type === 'warning')).toEqual([]);
  });

  it('a resumed session counts only the records from its own prompt on (should an earlier turn’s lines be read)', () => {
    const resumed = wireOf(wire('turn.prompt', 1), usageRecord(2, 1000, 100), wire('turn.ended', 3), wire('turn.prompt', 10), usageRecord(11, 7, 3));
    expect(tokensOf(['main', resumed])).toMatchObject({ input: 7, output: 3 });
    // A subagent's prompt does not move the start.
    expect(tokensOf(['main', wireOf(wire('turn.prompt', 1), usageRecord(2, 5, 1))], ['sub', wireOf(JSON.stringify({ type: 'turn.prompt', agentId: 'agent-1', time: 3 }), usageRecord(4, 6, 1, 0, 0, 'agent-1'))]))
      .toMatchObject({ input: 11, output: 2 });
  });

  it('a subagent’s records count; the same record in two wire files counts once', () => {
    const sub = usageRecord(5, 40, 4, 0, 0, 'agent-1');
    expect(tokensOf(['main', wireOf(wire('turn.prompt', 1), usageRecord(2, 100, 10), sub)], ['sub', wireOf(sub)])).toMatchObject({ input: 140, output: 14 });
  });

  it('lines arriving in pieces from several files, interleaved with stdout, sum as if read whole', () => {
    const main = wireOf(wire('turn.prompt', 1), ...Array.from({ length: 30 }, (_, i) => usageRecord(10 + i, 100 + i, 10, 3, 1)), wire('turn.ended', 99));
    const sub = wireOf(JSON.stringify({ type: 'turn.prompt', agentId: 'agent-1', time: 20 }), ...Array.from({ length: 12 }, (_, i) => usageRecord(21 + i, 7, 2, 0, 0, 'agent-1')));
    const out = lines(calls(fn('a', 'Agent', { prompt: 'p', description: 'd' })), result('a', 'done'), text('ok'), hint());
    const expected = { input: 30 * 100 + 435 + 12 * 7, output: 300 + 24, cache_read: 90, cache_write: 30, reasoning: null };
    for (const [a, b, c] of [[1, 1, 1], [7, 13, 5], [64, 3, 200], [4096, 4096, 4096]] as const) {
      const { result: r, stripped } = run(interleave(cut('main', main, a), cut('out', out, c), cut('sub', sub, b)));
      expect(r.tokens, `pieces of ${a}/${b}/${c}`).toEqual(expected);
      expect(stripped.filter((e) => e.type === 'unknown' || e.type === 'warning')).toEqual([]);
    }
  });

  it('an unreadable count makes its class null (never 0), named in a warning; no usage record at all is no usage', () => {
    const bad = JSON.stringify({ type: 'usage.record', agentId: 'main', usage: { inputOther: -1, output: 5, inputCacheRead: 0, inputCacheCreation: 0 }, time: 2 });
    const { result, stripped } = run([stdout(text('hi')), ['main', wireOf(wire('turn.prompt', 1), bad, usageRecord(3, 10, 1))]]);
    expect(result.tokens).toEqual({ input: null, output: 6, cache_read: 0, cache_write: 0, reasoning: null });
    expect(stripped.filter((e) => e.type === 'warning')).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining('wire.jsonl.usage.record[0].usage.inputOther') }]);
    expect(tokensOf(['main', wireOf(wire('turn.prompt', 1), wire('turn.ended', 2))])).toBeNull();
    expect(tokensOf()).toBeNull();
    expect(translateText(adapter, lines(text('hi'))).summary.result.tokens).toBeNull();
  });

  it('a wire line that is no JSON record is unknown and named in the usage warning; the records around it still count', () => {
    const bad = JSON.stringify({ type: 'usage.record', usage: { inputOther: 'x', output: 1, inputCacheRead: 0, inputCacheCreation: 0 } });
    const { result, stripped } = run([stdout(text('hi')), ['main', `${bad}\nnot json\n[1]\n${usageRecord(3, 10, 1)}\n`]]);
    expect(stripped.filter((e) => e.type === 'unknown')).toEqual([{ type: 'unknown', raw: 'not json' }, { type: 'unknown', raw: [1] }]);
    const warnings = stripped.filter((e) => e.type === 'warning');
    expect(warnings.map((e) => e.code)).toEqual(['unreadable_usage']);
    expect(warnings[0]!.message).toMatch(/usage\.record\[0\]\.usage\.inputOther.*2 lines that were no JSON record/);
    expect(result.tokens).toEqual({ input: null, output: 2, cache_read: 0, cache_write: 0, reasoning: null });
  });

  it('a line of another side file is unknown', () => {
    const session = new TranslationSession(adapter, { workdir: W }, { clock: FIXED_CLOCK });
    expect(strip(session.side('other', { text: usageRecord(1, 1, 1), bytes: 10, truncated: false }))).toEqual([{ type: 'unknown', raw: JSON.parse(usageRecord(1, 1, 1)) }]);
    expect(session.finish({ code: 0, signal: null }).summary.result.tokens).toBeNull();
  });
});

describe('kimi adapter: hostile wire lines (the property suite feeds stdout only)', () => {
  it('a line past the line cap is unknown, cut; the records around it count', () => {
    const huge = `{"type":"usage.record","usage":{"inputOther":1},"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`;
    const { result, stripped } = run([stdout(text('hi')), ['main', wireOf(usageRecord(1, 10, 1), huge, usageRecord(2, 10, 1))]]);
    const unknowns = stripped.filter((e) => e.type === 'unknown');
    expect(unknowns).toHaveLength(1);
    expect(unknowns[0]).toMatchObject({ original_bytes: huge.length });
    expect(result.tokens).toMatchObject({ input: 20, output: 2 });
  });

  it('a long profile or system-prompt line yields nothing and is not kept', () => {
    const profile = JSON.stringify({ type: 'profile.bind', agentId: 'main', systemPrompt: 'p'.repeat(2 * 1024 * 1024), time: 1 });
    const { result, stripped } = run([stdout(text('hi')), ['main', wireOf(profile, usageRecord(2, 10, 1))]]);
    expect(stripped).toEqual([{ type: 'agent', message: 'hi' }]);
    expect(JSON.stringify(result.raw_usage).length).toBeLessThan(MAX_RAW_RECORD_CHARS);
  });

  it('a long usage record counts; raw_usage keeps only its counts', () => {
    const long = JSON.stringify({ type: 'usage.record', agentId: 'main', model: 'm'.repeat(1024 * 1024), usage: { inputOther: 5, output: 2, inputCacheRead: 1, inputCacheCreation: 0, junk: 'j'.repeat(10_000) }, time: 3 });
    const { result } = run([stdout(text('hi')), ['main', wireOf(long, long)]]);
    expect(result.tokens).toEqual({ input: 5, output: 2, cache_read: 1, cache_write: 0, reasoning: null });
    expect(result.raw_usage).toEqual({ usage_records: [{ type: 'usage.record', agentId: 'main', time: 3, usage: { inputOther: 5, output: 2, inputCacheRead: 1, inputCacheCreation: 0 } }] });
  });

  it(`more than ${MAX_USAGE_RECORDS} distinct usage records: usage unknown (null), not a partial sum`, () => {
    const many = Array.from({ length: MAX_USAGE_RECORDS + 1 }, (_, i) => usageRecord(i, 1, 1)).join('\n');
    const { result, stripped } = run([stdout(text('hi')), ['main', many]]);
    expect(result.tokens).toEqual({ input: null, output: null, cache_read: null, cache_write: null, reasoning: null });
    expect(stripped.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['unreadable_usage']);
  });
});

describe('kimi adapter: invocation', () => {
  const base = { model: 'moonshotai/kimi-k2', prompt: '-p looks like a flag', workdir: '/w', home: '/h' };

  it('prompt mode with stream-json; the prompt as one --prompt= argument; model by environment, Kimi’s home in HOME', () => {
    const inv = adapter.invocation(base);
    expect(inv.argv).toEqual(['kimi', '--prompt=-p looks like a flag', '--output-format', 'stream-json']);
    expect(inv.stdin).toBe('close');
    expect(inv.env).toMatchObject({
      KIMI_CODE_HOME: '/h/.kimi-code',
      KIMI_MODEL_NAME: 'moonshotai/kimi-k2',
      KIMI_MODEL_PROVIDER_TYPE: 'openai',
      KIMI_MODEL_BASE_URL: OPENROUTER_BASE_URL,
      KIMI_DISABLE_TELEMETRY: '1',
    });
    // The key is injected by the driver (KIMI_MODEL_API_KEY), never by the adapter; no file, no report.
    expect(inv.env.KIMI_MODEL_API_KEY).toBeUndefined();
    expect(inv.files).toEqual([]);
    expect(inv.reports).toBeUndefined();
  });

  it('tails every agent’s wire.jsonl of every session below KIMI_CODE_HOME', () => {
    const inv = adapter.invocation(base);
    expect(inv.sideFiles).toEqual([{ name: WIRE, path: '.kimi-code/sessions/*/*/agents/*/wire.jsonl', read: 'lines' }]);
    expect(WIRE_PATH.startsWith(`${inv.env.KIMI_CODE_HOME!.slice('/h/'.length)}/`)).toBe(true);
    expect(KIMI_HOME_DIR).toBe('.kimi-code');
  });

  it('a base URL (stub, gateway) is <base>/v1; a continued session resumes by id', () => {
    const inv = adapter.invocation({ ...base, baseUrl: 'http://127.0.0.1:9/', resumeSessionId: 'session_1' });
    expect(inv.env.KIMI_MODEL_BASE_URL).toBe('http://127.0.0.1:9/v1');
    expect(inv.argv.slice(-2)).toEqual(['--session', 'session_1']);
  });
});
