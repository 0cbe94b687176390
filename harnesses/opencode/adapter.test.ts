import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import opencodeAdapter from './adapter.ts';
import { opencodeToolKind } from './map-opencode-tools.ts';
import { addStep, emptyTotals, opencodeTokens } from './usage.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = opencodeAdapter(getHarness('opencode').manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-opencode';

describe('opencode adapter: recorded transcripts', () => {
  it('1.18.33 reference session (no ripgrep installed): tool failures are is_success false; todowrite and a skill without its dir are unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('opencode-1.18.33-run-json.jsonl'));
    expect(strip(events).filter((e) => e.type !== 'unknown')).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'bash' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'write' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'edit' },
      { type: 'search', query: 'hello', path: W, is_success: false, tool_name: 'grep' },
      { type: 'search', query: '**/*.txt', is_success: false, tool_name: 'glob' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'ses_dc87ddf42ffeR2qRD8XI1f89VU', subagent_name: 'general' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'ses_dc87ddf42ffeR2qRD8XI1f89VU', subagent_name: 'general', is_success: true },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'bash' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 10 steps of {input 900 (non-cached), output 68, reasoning 12, cache.read 300}: output = 680 + 120.
    expect(summary.result).toMatchObject({ session_id: 'ses_dc87df95cffeaBUsKpVrSnYSif', tokens: { input: 9000, output: 800, reasoning: 120, cache_read: 3000, cache_write: 0 }, reported_cost_usd: null });
  });

  it('grep, glob and skill with ripgrep present (reference) and the newest release recorded here', () => {
    const withRg = translateFixture(adapter, fixture('opencode-1.18.33-run-json-grep-glob-skill-todo.jsonl')).events;
    expect(strip(withRg).filter((e) => e.type === 'search' || e.type === 'skill').map((e) => e.is_success)).toEqual([true, true, true]);
    const recorded = translateFixture(adapter, fixture('opencode-1.18.33-tools.jsonl')).events;
    expect(recorded.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(recorded.find((e) => e.type === 'skill')).toMatchObject({ skill_name: 'demo', is_success: true });
  });

  it('an API error record is an error with its HTTP status', () => {
    const { events, summary } = translateFixture(adapter, fixture('opencode-1.18.33-error.jsonl'), { exitCode: 1 });
    expect(strip(events)[0]).toEqual({ type: 'error', message: 'mock bad request', code: 'http_400' });
    expect(summary.result.is_error).toBe(true);
  });
});

describe('opencode adapter: issue 41 (hand-written snippet in 1.18.33 format)', () => {
  it('a read whose output says <type>directory</type> is a listing of that directory; a file read stays a read', () => {
    const { events } = translateFixture(adapter, fixture('opencode-1.18.33-handwritten-read-directory.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'list', path: W, is_success: true, tool_name: 'read' },
      { type: 'list', path: `${W}/src`, is_success: true, tool_name: 'read' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 1, is_success: true, tool_name: 'read' },
      { type: 'agent', message: 'All done.' },
    ]);
  });

  it('a bash call whose metadata reports no exit code claims no outcome: "completed" says the tool ran, not that the command succeeded', () => {
    const { events } = translateFixture(adapter, fixture('opencode-1.18.33-handwritten-bash-without-exit.jsonl'));
    expect(strip(events)).toEqual([{ type: 'command', command: 'make test', tool_name: 'bash' }]);
  });
});

describe('opencode adapter: tools, usage, invocation', () => {
  it.each([
    ['bash', 'command'], ['read', 'read'], ['write', 'write'], ['edit', 'write'], ['multiedit', 'write'], ['patch', 'write'], ['apply_patch', 'write'], ['grep', 'search'], ['glob', 'search'],
    ['list', 'list'], ['skill', 'skill'], ['task', 'subagent'], ['todowrite', 'other'], ['todoread', 'other'], ['webfetch', 'other'], ['websearch', 'other'], ['question', 'other'],
  ])('%s -> %s', (name, kind) => {
    expect(opencodeToolKind(name)).toBe(kind);
  });

  it('a record it cannot read is unknown', () => {
    const { events } = translateText(adapter, ['{"type":"tool_use","part":{"type":"tool","tool":"bash"}}', '{"type":"brand_new","part":{}}', 'garbage'].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown']);
  });

  it('usage sums steps; output gets reasoning added back; the step cost is an estimate kept out of reported cost', () => {
    const totals = emptyTotals();
    expect(addStep(totals, { input: 900, output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, 0.002)).toEqual([]);
    expect(addStep(totals, { input: 100, output: 10, reasoning: 0, cache: { read: 0, write: 50 } }, 0.001)).toEqual([]);
    expect(opencodeTokens(totals)).toEqual({ input: 1000, output: 90, reasoning: 12, cache_read: 300, cache_write: 50 });
    expect(totals.cost).toBeCloseTo(0.003, 12);
  });

  it('invocation: run --format json --auto --thinking; a base URL defines a custom provider keyed from the injected variable', () => {
    expect(adapter.invocation({ model: 'openrouter/anthropic/claude-sonnet-4.5', prompt: 'fix it', workdir: '/w', home: '/h' }).argv).toEqual(['opencode', 'run', '--format', 'json', '--auto', '--thinking', '-m', 'openrouter/anthropic/claude-sonnet-4.5', 'fix it']);
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9' });
    expect(inv.argv).toContain('tcab/mock-model');
    const config = JSON.parse(inv.files[0]!.content);
    expect(config.provider.tcab.options).toEqual({ baseURL: 'http://127.0.0.1:9/v1', apiKey: '{env:OPENROUTER_API_KEY}' });
    expect(inv.files[0]!.path).toBe('.config/opencode/opencode.json');
  });
});

describe('opencode adapter: hostile records (issue 19)', () => {
  const S = 'ses_1';
  const tool = (name: string, state: object, extra: object = {}) => ({ type: 'tool_use', sessionID: S, part: { type: 'tool', tool: name, callID: 'call_1', state, ...extra } });
  const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');

  it.each([
    ['a numeric status', tool('bash', { status: 1, input: { command: 'ls' }, metadata: { exit: 0 } })],
    ['a string exit code', tool('bash', { status: 'completed', input: { command: 'ls' }, metadata: { exit: '0' } })],
    ['a string line number', tool('read', { status: 'completed', input: { filePath: '/w/a' }, metadata: { display: { lineStart: '1', lineEnd: 2 } } })],
    ['a null list path', tool('list', { status: 'completed', input: { path: null } })],
    ['a numeric subagent type', tool('task', { status: 'completed', input: { subagent_type: 3 }, metadata: { sessionId: 'ses_2' } })],
    ['an error with a string status code', { type: 'error', sessionID: S, error: { name: 'APIError', data: { message: 'bad', statusCode: '400' } } }],
    ['a numeric session id', { type: 'text', sessionID: 5, part: { text: 'hi' } }],
    ['a tool named like an Object property', tool('constructor', { status: 'completed', input: {} })],
  ])('finding 7: %s is unknown with the raw record, never a guessed outcome', (_, record) => {
    const { events } = translateText(adapter, lines(record));
    // A tool part is kept whole as the raw value; any other record is kept whole.
    const raw = record.type === 'tool_use' ? (record as { part: object }).part : record;
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['a numeric command', tool('bash', { status: 'completed', input: { command: 7 }, metadata: { exit: 0 } })],
    ['a numeric grep pattern', tool('grep', { status: 'completed', input: { pattern: 5 } })],
    ['a text part without text', { type: 'text', sessionID: S, part: { text: 42 } }],
  ])('unknown before issue 19 too, kept so: %s is unknown with the raw record', (_, record) => {
    const { events } = translateText(adapter, lines(record));
    // A tool part is kept whole as the raw value; any other record is kept whole.
    const raw = record.type === 'tool_use' ? (record as { part: object }).part : record;
    expect(strip(events)).toEqual([{ type: 'unknown', raw }]);
  });

  it.each([
    ['a string count', { input: '900', output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, 'input', { input: null, output: 80, reasoning: 12, cache_read: 300, cache_write: 0 }],
    ['a null reasoning count', { input: 900, output: 68, reasoning: null, cache: { read: 300, write: 0 } }, 'reasoning', { input: 900, output: null, reasoning: null, cache_read: 300, cache_write: 0 }],
    ['a float cache count', { input: 900, output: 68, reasoning: 12, cache: { read: 1.5, write: 0 } }, 'cache.read', { input: 900, output: 80, reasoning: 12, cache_read: null, cache_write: 0 }],
    ['no cache object', { input: 900, output: 68, reasoning: 12 }, 'cache', { input: 900, output: 80, reasoning: 12, cache_read: null, cache_write: null }],
  ])('finding 7: a step with %s makes its classes null for the session and a warning names the field', (_, bad, field, tokens) => {
    const good = { type: 'step_finish', sessionID: S, part: { tokens: { input: 900, output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, cost: 0 } };
    const { events, summary } = translateText(adapter, lines(good, { ...good, part: { tokens: bad, cost: 0, reason: 'stop' } }));
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`step_finish.part.tokens.${field} `) }]);
    const sum = (v: number | null) => (v === null ? null : v * 2);
    expect(summary.result.tokens).toEqual(Object.fromEntries(Object.entries(tokens).map(([k, v]) => [k, sum(v)])));
  });

  it('finding 7: a step_finish whose tokens are unreadable makes the session usage unknown, not a smaller sum', () => {
    const good = { type: 'step_finish', sessionID: S, part: { reason: 'tool-calls', tokens: { input: 900, output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, cost: 0 } };
    const bad = { type: 'step_finish', sessionID: S, part: { reason: 'stop', tokens: 'lots', cost: 0 } };
    const { events, summary } = translateText(adapter, lines(good, bad));
    expect(events.map((e) => e.type)).toEqual(['unknown', 'warning']);
    expect(summary.result.tokens).toEqual({ input: null, output: null, reasoning: null, cache_read: null, cache_write: null });
  });

  it('finding 7: the final answer is the text of the step OpenCode finished with "stop", not whatever text came last', () => {
    const step = (reason: string) => ({ type: 'step_finish', sessionID: S, part: { reason, tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } } } });
    const text = (t: string) => ({ type: 'text', sessionID: S, part: { text: t } });
    const start = { type: 'step_start', sessionID: S, part: {} };
    expect(translateText(adapter, lines(start, text('Let me look.'), step('tool-calls'))).summary.result.final_text).toBeUndefined();
    expect(translateText(adapter, lines(start, text('Let me look.'), step('tool-calls'), start, text('Done.'), step('stop'))).summary.result.final_text).toBe('Done.');
  });

  it('finding 7: a session cut before its last step (killed, timed out) has unknown usage, not the smaller sum of the steps seen', () => {
    const step = (reason: string) => ({ type: 'step_finish', sessionID: S, part: { reason, tokens: { input: 900, output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, cost: 0 } });
    const cut = translateText(adapter, lines(step('tool-calls'), step('tool-calls')));
    expect(cut.summary.result.tokens).toBeNull();
    expect((cut.summary.result.raw_usage as { steps: unknown[] }).steps).toHaveLength(2);
    expect(strip(cut.events)).toEqual([{ type: 'warning', code: 'incomplete_usage', message: expect.stringContaining('2 finished step(s)') }]);
    const whole = translateText(adapter, lines(step('tool-calls'), step('stop')));
    expect(whole.summary.result.tokens).toEqual({ input: 1800, output: 160, reasoning: 24, cache_read: 600, cache_write: 0 });
    expect(whole.events).toEqual([]);
  });

  it('finding 8: a float exit code is never emitted: the record is unknown and every event valid', () => {
    const record = tool('bash', { status: 'completed', input: { command: 'false' }, metadata: { exit: 1.5 } });
    const { events } = translateText(adapter, lines(record));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: record.part }]);
  });

  it.each([
    ['completed', undefined],
    ['error', false],
  ])('fuzz seed 328713745: a %s bash call with a null exit has no exit code and claims no success', (status, isSuccess) => {
    const record = tool('bash', { status, input: { command: 'sleep 99' }, metadata: { exit: null } });
    const { events } = translateText(adapter, lines(record));
    expect(strip(events)).toEqual([{ type: 'command', command: 'sleep 99', tool_name: 'bash', ...(isSuccess === undefined ? {} : { is_success: isSuccess }) }]);
  });

  it('each tool_use record is a whole call: two with one callID are both reported (nothing is held, so nothing can be dropped)', () => {
    const first = tool('bash', { status: 'completed', input: { command: 'rm -rf /important' }, metadata: { exit: 0 } });
    const second = tool('bash', { status: 'completed', input: { command: 'echo harmless' }, metadata: { exit: 0 } });
    expect(strip(translateText(adapter, lines(first, second)).events).map((e) => e.command)).toEqual(['rm -rf /important', 'echo harmless']);
  });
});
