import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import kimiAdapter, { KIMI_HOME_DIR, OPENROUTER_BASE_URL } from './adapter.ts';
import { kimiToolKind } from './map-kimi-tools.ts';
import { kimiUsage } from './usage.ts';
import { CONFIG_TOML, HOOK_SCRIPT, HOOK_SOURCE, USAGE_REPORT } from './usage-hook.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = kimiAdapter(getHarness('kimi').manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => join(fixtures, name);
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
const W = '/w';

// Records in Kimi Code 2.1.0's shapes (fixtures/kimi-code-2.1.0-stream-json.jsonl).
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

describe('kimi adapter: recorded transcripts', () => {
  it('2.1.0 reference sample: the command, the answer, the session id; usage from the wire file summed over both model calls', () => {
    const { events, summary } = translateFixture(adapter, fixture('kimi-code-2.1.0-stream-json.jsonl'), {
      reports: { [USAGE_REPORT]: readFileSync(fixture('kimi-code-2.1.0-wire.jsonl'), 'utf8') },
    });
    expect(strip(events)).toEqual([
      { type: 'command', command: 'echo hi-from-stub', tool_name: 'Bash' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    // Two usage.record lines of {inputOther 100, output 15, inputCacheRead 20, inputCacheCreation 0}.
    expect(summary.result).toMatchObject({
      session_id: 'session_e46a02af-c20a-45a6-b08c-075a4dcca100',
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: 0, reasoning: null },
      reported_cost_usd: null,
      final_text: 'Stub says: done.',
    });
    expect((summary.result.raw_usage as { usage_records: unknown[] }).usage_records).toHaveLength(2);
  });

  // Recorded by `tcab harnesses verify kimi --record` against the newest release.
  const recorded = readdirSync(fixtures);
  const tools = recorded.find((f) => /^kimi-\d.*-tools\.jsonl$/.test(f));
  const toolsUsage = recorded.find((f) => /^kimi-\d.*-tools\.kimi-usage\.jsonl$/.test(f));
  const apiError = recorded.find((f) => /^kimi-\d.*-api-error\.jsonl$/.test(f));

  it.runIf(tools && toolsUsage)('newest release, tools scenario: every tool mapped, TodoList unknown, usage from the hook’s report', () => {
    const { events, summary } = translateFixture(adapter, fixture(tools!), { workdir: '/ws', reports: { [USAGE_REPORT]: readFileSync(fixture(toolsUsage!), 'utf8') } });
    const kinds = strip(events).map((e) => `${e.type}${e.tool_name ? `:${e.tool_name}` : ''}`);
    expect(kinds).toEqual(['agent', 'command:Bash', 'write:Write', 'read:Read', 'write:Edit', 'search:Glob', 'search:Grep', 'unknown', 'command:Bash', 'agent']);
    // stdout says nothing of a command's outcome Kimi vouches for (its failure line is text a command could print).
    expect(strip(events).filter((e) => e.type === 'command')).toEqual([
      { type: 'command', command: 'ls -la && echo hi', tool_name: 'Bash' },
      { type: 'command', command: 'exit 3', tool_name: 'Bash' },
    ]);
    expect(strip(events).find((e) => e.type === 'read')).toMatchObject({ path: '/ws/hello.txt' });
    // Nine model calls of the stub's {900 uncached, 300 cache read, 80 output}; no cache write on the chat wire.
    expect(summary.result.tokens).toEqual({ input: 8100, output: 720, cache_read: 2700, cache_write: 0, reasoning: null });
    expect(summary.result).toMatchObject({ final_text: 'All done.', reported_cost_usd: null });
    expect(summary.result.session_id).toMatch(/^session_/);
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

describe('kimi adapter: usage (the wire file’s usage.record lines)', () => {
  it('maps inputOther/output/inputCacheRead/inputCacheCreation onto input/output/cache_read/cache_write, summed', () => {
    const usage = kimiUsage([wire('turn.prompt', 1), usageRecord(2, 100, 10, 20, 5), usageRecord(3, 50, 5, 0, 0)].join('\n'));
    expect(usage?.tokens).toEqual({ input: 150, output: 15, cache_read: 20, cache_write: 5, reasoning: null });
    expect(usage?.unreadable).toEqual([]);
  });

  it('a resumed session counts only the records from its own prompt on', () => {
    const report = [wire('turn.prompt', 1), usageRecord(2, 1000, 100), wire('turn.ended', 3), wire('turn.prompt', 10), usageRecord(11, 7, 3)].join('\n');
    expect(kimiUsage(report)?.tokens).toMatchObject({ input: 7, output: 3 });
  });

  it('a subagent’s records count; the same record copied from two wire files counts once', () => {
    const sub = usageRecord(5, 40, 4, 0, 0, 'agent-1');
    const report = [wire('turn.prompt', 1), usageRecord(2, 100, 10), sub, sub].join('\n');
    expect(kimiUsage(report)?.tokens).toMatchObject({ input: 140, output: 14 });
  });

  it('an unreadable count makes its class null (never 0), named; no usage record at all is no usage', () => {
    const bad = JSON.stringify({ type: 'usage.record', agentId: 'main', usage: { inputOther: -1, output: 5, inputCacheRead: 0, inputCacheCreation: 0 }, time: 2 });
    const usage = kimiUsage([wire('turn.prompt', 1), bad, usageRecord(3, 10, 1)].join('\n'));
    expect(usage?.tokens).toEqual({ input: null, output: 6, cache_read: 0, cache_write: 0, reasoning: null });
    expect(usage?.unreadable).toEqual(['usage.record[0].usage.inputOther']);
    expect(kimiUsage(wire('turn.prompt', 1))).toBeUndefined();
    expect(kimiUsage('')).toBeUndefined();
  });

  it('the translator warns about unreadable counts and leaves tokens null without the report', () => {
    const bad = JSON.stringify({ type: 'usage.record', usage: { inputOther: 'x', output: 1, inputCacheRead: 0, inputCacheCreation: 0 } });
    const { events, summary } = translateText(adapter, lines(text('hi')), { reports: { [USAGE_REPORT]: `${bad}\nnot json\n` } });
    expect(strip(events).filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['unreadable_usage']);
    expect(summary.result.tokens?.input).toBeNull();
    expect(translateText(adapter, lines(text('hi'))).summary.result.tokens).toBeNull();
  });
});

describe('kimi adapter: the Stop hook that copies usage into HOME', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Runs the hook script as Kimi would (payload on stdin, HOME and KIMI_CODE_HOME set); returns the report. */
  function runHook(payload: string, files: Record<string, string>): string | undefined {
    dir = mkdtempSync(join(tmpdir(), 'kimi-hook-'));
    const home = join(dir, 'home');
    for (const [path, content] of Object.entries({ ...files, [HOOK_SCRIPT]: HOOK_SOURCE })) {
      mkdirSync(join(home, path, '..'), { recursive: true });
      writeFileSync(join(home, path), content);
    }
    execFileSync(process.execPath, [join(home, HOOK_SCRIPT)], { input: payload, env: { HOME: home, KIMI_CODE_HOME: join(home, KIMI_HOME_DIR) } });
    try {
      return readFileSync(join(home, USAGE_REPORT), 'utf8');
    } catch {
      return undefined;
    }
  }

  const session = (sid: string, agent = 'main') => `${KIMI_HOME_DIR}/sessions/wd_work_0123/${sid}/agents/${agent}/wire.jsonl`;

  it('copies the prompt, turn and usage lines of the named session’s wire files (every agent), nothing else', () => {
    const sample = readFileSync(fixture('kimi-code-2.1.0-wire.jsonl'), 'utf8');
    const report = runHook(JSON.stringify({ hook_event_name: 'Stop', session_id: 's1', cwd: '/w' }), {
      [session('s1')]: sample,
      [session('s1', 'sub-1')]: `${usageRecord(1796533726000, 1, 1, 0, 0, 'sub-1')}\n`,
      [session('other')]: `${usageRecord(9, 999, 999)}\n`,
    });
    const types = report!.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual(['turn.prompt', 'usage.record', 'usage.record', 'turn.ended', 'usage.record']);
    expect(kimiUsage(report!)?.tokens).toMatchObject({ input: 201, output: 31 });
  });

  it.each([['no JSON', 'nope'], ['no session id', '{}'], ['a session id that is a path', JSON.stringify({ session_id: '../s1' })]])('%s on stdin: no report', (_label, payload) => {
    expect(runHook(payload, { [session('s1')]: `${usageRecord(1, 1, 1)}\n` })).toBeUndefined();
  });

  it('config.toml names the script by HOME and the Stop event', () => {
    expect(CONFIG_TOML).toContain('event = "Stop"');
    expect(CONFIG_TOML).toContain(`"$HOME/${HOOK_SCRIPT}"`);
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
    // The key is injected by the driver (KIMI_MODEL_API_KEY), never by the adapter.
    expect(inv.env.KIMI_MODEL_API_KEY).toBeUndefined();
    expect(inv.reports).toEqual([USAGE_REPORT]);
    expect(inv.files.map((f) => f.path)).toEqual(['.kimi-code/config.toml', HOOK_SCRIPT]);
    expect(inv.files.map((f) => f.content).join('')).not.toMatch(/api[_-]?key/i);
  });

  it('a base URL (stub, gateway) is <base>/v1; a continued session resumes by id', () => {
    const inv = adapter.invocation({ ...base, baseUrl: 'http://127.0.0.1:9/', resumeSessionId: 'session_1' });
    expect(inv.env.KIMI_MODEL_BASE_URL).toBe('http://127.0.0.1:9/v1');
    expect(inv.argv.slice(-2)).toEqual(['--session', 'session_1']);
  });
});
