import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import vibeAdapter, { MISTRAL_API_BASE, OUTPUT_DIR, vibeConfig } from './adapter.ts';
import { EXPORT_REPORT } from './export.ts';
import { vibeToolKind } from './map-vibe-tools.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const adapter = vibeAdapter(getHarness('vibe').manifest);
const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => join(fixtures, name);
const exportOf = (name: string) => readFileSync(fixture(`${name}.export`), 'utf8');
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');
const W = '/w';
const SESSION = '9c872596-66bf-697e-e2b0-3cb655e60851';

// Entries in Vibe 3.0.3's shapes (fixtures/vibe-3.0.3-*.jsonl).
const base = (id: string, type: string, status = 'completed') => ({ id, sessionId: SESSION, turnId: 'turn-1', createdAt: 1, updatedAt: 1, generationStatus: status, relatedEntryId: null, type });
const user = (text: string) => ({ ...base('user-1', 'message'), role: 'user', content: [{ type: 'text', text }], source: 'turn_start', outcome: null });
const said = (id: string, text: string, extra: object = {}) => ({ ...base(id, 'message'), role: 'assistant', content: [{ type: 'text', text }], source: 'harness', outcome: { type: 'committed' }, ...extra });
const thought = (id: string, text: string) => ({ ...base(id, 'reasoning'), text, outcome: { type: 'committed' } });
const done = (success: boolean, output: unknown = null) => ({ status: 'completed', output, outputText: '', display: { success, verb: 'Ran', message: 'm', warnings: [] } });
const effect = (id: string, toolName: string, kind: string, input: object, state: object = done(true), extra: object = {}) => ({
  ...base(id, 'effect', (state as { status: string }).status === 'running' ? 'in_progress' : 'completed'),
  title: toolName,
  detail: { toolName, kind, input, display: { summary: 's', statusText: 't' }, ...extra },
  state,
});
/** An export.json as Vibe 3.0.3 writes it (vibe/app_server/run_export.py), with the config parts usage.ts reads. */
const exported = (extra: object = {}, prices: object = {}) =>
  JSON.stringify({
    outcome: 'finished',
    stop_reason: null,
    error: null,
    session_id: SESSION,
    usage: { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 300, total_tokens: 1280 },
    cost_usd: 0,
    steps: 1,
    config: { active_model: 'm', models: { m: { name: 'mock-model', provider: 'tcab', alias: 'm', input_price: 0, output_price: 0, ...prices } } },
    schema_version: 1,
    vibe_version: '3.0.3',
    exit_code: 0,
    ...extra,
  });
/** `report` null: the session wrote no export. */
const run = (records: object[], report: string | null = exported()) =>
  translateText(adapter, lines(...records), { workdir: W, reports: report === null ? undefined : { [EXPORT_REPORT]: report } });

describe('vibe adapter: recorded transcripts', () => {
  it('3.0.3 reference sample: the command, the answer; usage from export.json (input_tokens includes the cached 40); Vibe’s cost at the prices its config set', () => {
    const { events, summary } = translateFixture(adapter, fixture('vibe-3.0.3-streaming.jsonl'), { reports: { [EXPORT_REPORT]: exportOf('vibe-3.0.3-streaming') } });
    expect(strip(events)).toEqual([
      { type: 'command', command: 'echo hi-from-stub', is_success: true, tool_name: 'file_system.bash' },
      { type: 'agent', message: 'Stub says: done.' },
    ]);
    expect(summary.result).toMatchObject({
      session_id: SESSION,
      tokens: { input: 200, output: 30, cache_read: 40, cache_write: null, reasoning: null },
      // That run's config priced its model (input 3.0, output 15.0 per million): 240 x 3 + 30 x 15 = 0.00117 USD.
      reported_cost_usd: 0.00117,
      reported_model: 'stub-model',
      is_error: false,
    });
    expect(summary.result.final_text).toBeUndefined();
  });

  it('newest release, tools scenario: every effect mapped (a grep through bash is a search, a read of "." a listing), usage summed by Vibe', () => {
    const { events, summary } = translateFixture(adapter, fixture('vibe-3.0.3-tools.jsonl'), { workdir: '/ws', reports: { [EXPORT_REPORT]: exportOf('vibe-3.0.3-tools') } });
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    const kinds = strip(events).map((e) => `${e.type}${e.tool_name ? `:${e.tool_name}` : ''}`);
    expect(kinds).toEqual(['reasoning', 'agent', 'command:file_system.bash', 'write:file_system.write_file', 'read:file_system.read_file', 'write:file_system.edit', 'search:grep', 'list:file_system.read_file', 'command:file_system.bash', 'agent']);
    // Vibe's display.success is the return code being 0; the code itself is not on the stream.
    expect(strip(events).filter((e) => e.type === 'command').map((e) => [e.command, e.is_success, e.exit_code])).toEqual([
      ['ls -la && echo hi', true, undefined],
      ['exit 3', false, undefined],
    ]);
    expect(strip(events).find((e) => e.type === 'read')).toMatchObject({ path: '/ws/hello.txt', start_line: 1, end_line: 2, is_success: true });
    expect(strip(events).find((e) => e.type === 'search')).toMatchObject({ query: 'there', path: '/ws' });
    // Eight model calls of the stub's {900 uncached, 300 cache read, 80 output}; Vibe reports no cache writes.
    expect(summary.result.tokens).toEqual({ input: 7200, output: 640, cache_read: 2400, cache_write: null, reasoning: null });
    // The adapter's config sets no prices, so Vibe's cost (0) is no charge: kept raw, not reported.
    expect(summary.result).toMatchObject({ reported_cost_usd: null, raw_usage: { cost_usd: 0, steps: 8 }, is_error: false, reported_model: 'mock-model' });
  });

  it('newest release, HTTP 400: Vibe exits 2 (infrastructure_failure); export.json’s error is an error event, the verdict is_error', () => {
    const { events, summary } = translateFixture(adapter, fixture('vibe-3.0.3-api-error.jsonl'), { exitCode: 2, reports: { [EXPORT_REPORT]: exportOf('vibe-3.0.3-api-error') } });
    const errors = strip(events).filter((e) => e.type === 'error');
    expect(errors[0]).toMatchObject({ code: 'backend_error', message: expect.stringContaining('mock bad request') });
    expect(errors[1]).toMatchObject({ message: expect.stringContaining('exited with code 2') });
    expect(errors).toHaveLength(2);
    expect(summary.result).toMatchObject({ is_error: true, session_id: expect.any(String) });
    // The failed call spent nothing, and Vibe says so.
    expect(summary.result.tokens).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: null, reasoning: null });
  });

  it('newest release, subagent scenario: the spawn starts it, the export ends it; its usage is added to the root’s', () => {
    const { events, summary } = translateFixture(adapter, fixture('vibe-3.0.3-subagent.jsonl'), { reports: { [EXPORT_REPORT]: exportOf('vibe-3.0.3-subagent') } });
    const child = JSON.parse(exportOf('vibe-3.0.3-subagent')).subagents[0].session_id as string;
    expect(strip(events)).toEqual([
      { type: 'agent', message: 'I will ask a helper.' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: child, subagent_name: 'helper' },
      { type: 'agent', message: 'The helper is on it.' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: child, subagent_name: 'helper' },
    ]);
    // Root: two calls; the helper: one (the root's usage does not count it).
    expect(summary.result.tokens).toEqual({ input: 2700, output: 240, cache_read: 900, cache_write: null, reasoning: null });
  });
});

describe('vibe adapter: tools', () => {
  it.each([
    ['file_system.bash', 'tool', 'command'], ['bash', 'tool', 'command'], ['shell', 'shell', 'command'],
    ['file_system.read_file', 'file_read', 'read'], ['file_system.write_file', 'file_write', 'write'],
    ['file_system.edit', 'file_edit', 'write'], ['file_system.search_replace', 'tool', 'write'], ['grep', 'file_search', 'search'],
    ['agents.spawn', 'subagent', 'subagent'], ['subagent.spawn', 'tool', 'subagent'],
    ['skill.read', 'skill', 'other'], ['todo', 'todo', 'other'], ['process.start', 'process', 'other'], ['web_fetch', 'web_fetch', 'other'],
    ['constructor', 'tool', 'other'], ['__proto__', '__proto__', 'other'], ['x', 'toString', 'other'],
  ])('%s (kind %s) -> %s', (name, kind, expected) => {
    expect(vibeToolKind(name, kind)).toBe(expected);
  });

  it.each([
    ['a read of a range', effect('e', 'file_system.read_file', 'file_read', { filePath: 'a.txt', offset: 4, limit: 2 }, done(true, { filePath: '/w/a.txt', content: 'x', numLines: 2, startLine: 5 })), { type: 'read', path: '/w/a.txt', start_line: 5, end_line: 6, is_success: true, tool_name: 'file_system.read_file' }],
    ['a read of an empty file: no range', effect('e', 'file_system.read_file', 'file_read', { filePath: 'a.txt' }, done(true, { numLines: 0, startLine: 1 })), { type: 'read', path: '/w/a.txt', is_success: true, tool_name: 'file_system.read_file' }],
    ['a read of a directory named with a slash', effect('e', 'file_system.read_file', 'file_read', { filePath: 'src/' }), { type: 'list', path: '/w/src', is_success: true, tool_name: 'file_system.read_file' }],
    ['a write that failed', effect('e', 'file_system.write_file', 'file_write', { filePath: '/abs/n.txt', content: 'x' }, { status: 'failed', error: { message: 'denied', code: null }, display: { success: false } }), { type: 'write', path: '/abs/n.txt', is_success: false, tool_name: 'file_system.write_file' }],
    ['an edit skipped', effect('e', 'file_system.edit', 'file_edit', { filePath: 'n.txt', oldString: 'a', newString: 'b' }, { status: 'skipped', reason: 'no', display: { success: false } }), { type: 'write', path: '/w/n.txt', is_success: false, tool_name: 'file_system.edit' }],
    ['a manual shell command', effect('e', 'shell', 'shell', { command: 'ls' }), { type: 'command', command: 'ls', is_success: true, tool_name: 'shell' }],
  ])('%s', (_label, record, expected) => {
    expect(strip(run([record]).events)).toEqual([expected]);
  });

  it('an effect is reported once it settles: pending and running printings yield nothing, a printing after it settled is a restatement', () => {
    const running = effect('e1', 'file_system.bash', 'shell', { command: 'make' }, { status: 'running', outputText: '' });
    const settled = effect('e1', 'file_system.bash', 'shell', { command: 'make' }, done(false));
    const { events } = run([running, settled, settled]);
    expect(strip(events)).toEqual([{ type: 'command', command: 'make', is_success: false, tool_name: 'file_system.bash' }]);
  });

  it('a call that never settled is reported at the end without an outcome; a spawn that never settled only started', () => {
    const running = effect('e1', 'file_system.bash', 'shell', { command: 'sleep 99' }, { status: 'running' });
    const spawning = effect('e2', 'agents.spawn', 'subagent', { task: 't', agent: 'generic' }, { status: 'pending' }, { childSessionId: null, agentName: 'helper' });
    expect(strip(run([running, spawning], null).events)).toEqual([
      { type: 'command', command: 'sleep 99', tool_name: 'file_system.bash' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'e2', subagent_name: 'helper' },
    ]);
  });

  it('a spawn that failed is started and failed; a subagent the export says failed ends failed; one interrupted gets no end', () => {
    const failedSpawn = effect('effect-a1', 'agents.spawn', 'subagent', { task: 't', agent: 'generic' }, { status: 'failed', error: { message: 'no' }, display: { success: false } }, { childSessionId: null, agentName: 'one' });
    const spawned = (id: string, child: string, name: string) => effect(id, 'agents.spawn', 'subagent', { task: 't', agent: 'generic' }, done(true), { childSessionId: child, agentName: name });
    const sub = (session: string, status: string, action: string) => ({ session_id: session, agent_name: session, spawn_action_id: action, status, usage: { input_tokens: 10, output_tokens: 1, cached_input_tokens: 0, total_tokens: 11 }, cost_usd: 0, steps: 1 });
    const report = exported({ subagents: [sub('two', 'failed', 'a2'), sub('three', 'interrupted', 'a3'), sub('elsewhere', 'idle', 'a9')] });
    const { events, summary } = run([failedSpawn, spawned('effect-a2', 'two', 'two'), spawned('effect-a3', 'three', 'three')], report);
    expect(strip(events)).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'effect-a1', subagent_name: 'one' },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 'effect-a1', subagent_name: 'one', is_success: false },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'two', subagent_name: 'two' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'three', subagent_name: 'three' },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 'two', subagent_name: 'two', is_success: false },
    ]);
    // Every subagent's usage counts, the one this stream did not start too (export.json lists the session's).
    expect(summary.result.tokens).toMatchObject({ input: 900 + 30, output: 83 });
  });

  it('tools without an event type, and calls whose input fails its schema, are unknown with their entry', () => {
    const records = [
      effect('e1', 'skill.read', 'skill', { name: 'demo' }),
      effect('e2', 'todo', 'todo', { action: 'write', todos: [] }),
      effect('e3', 'mcp_server.tool', 'tool', { x: 1 }),
      effect('e4', 'file_system.bash', 'shell', { command: 7 }),
      effect('e5', 'file_system.read_file', 'file_read', { nothing: 'here' }),
    ];
    expect(strip(run(records).events)).toEqual(records.map((raw) => ({ type: 'unknown', raw })));
  });
});

describe('vibe adapter: messages and entries', () => {
  it('text -> agent, reasoning -> reasoning, the prompt echo and generating entries yield nothing; no final answer is claimed', () => {
    const { events, summary } = run([
      user('do it'),
      { ...thought('r0', 'half'), generationStatus: 'in_progress' },
      thought('r1', 'hmm'),
      said('a1', 'Looking.'),
      effect('e1', 'file_system.bash', 'shell', { command: 'ls' }),
      { ...said('a2', 'Do'), generationStatus: 'in_progress', outcome: null },
      said('a2', 'Done.'),
    ]);
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'hmm' },
      { type: 'agent', message: 'Looking.' },
      { type: 'command', command: 'ls', is_success: true, tool_name: 'file_system.bash' },
      { type: 'agent', message: 'Done.' },
    ]);
    expect(summary.result).toMatchObject({ is_error: false, session_id: SESSION });
    // Vibe reports no answer apart from its messages; a stream cut short could not tell its last one from it.
    expect(summary.result.final_text).toBeUndefined();
    expect(events.every((e) => (e as { session_id?: string }).session_id === SESSION)).toBe(true);
  });

  it('output Vibe discarded is a warning, not an answer; an image block is unknown, the text beside it kept', () => {
    const image = { type: 'image', attachment: { url: 'x' } };
    const { events } = run([
      said('a1', 'draft', { outcome: { type: 'discarded', cause: 'retry' } }),
      { ...said('a2', 'kept'), content: [image, { type: 'text', text: 'kept' }] },
    ]);
    expect(strip(events)).toEqual([
      { type: 'warning', message: 'Vibe discarded generated output (retry)', code: 'discarded_output' },
      { type: 'unknown', raw: image },
      { type: 'agent', message: 'kept' },
    ]);
  });

  it('notices: error -> error, warning -> warning, quiet info folds; a compaction checkpoint is a warning', () => {
    const notice = (level: string, message: string, kind: string) => ({ ...base(`n-${kind}`, 'notice'), level, message, detail: { kind } });
    const { events } = run([
      notice('error', 'hook failed', 'hook_completed'),
      notice('warning', 'slow', 'hook_completed'),
      notice('info', 'title', 'session_title_updated'),
      { ...base('c1', 'checkpoint'), kind: 'compaction', message: 'Context compacted', details: {} },
    ]);
    expect(strip(events)).toEqual([
      { type: 'error', message: 'hook failed' },
      { type: 'warning', message: 'slow', code: 'hook_completed' },
      { type: 'warning', message: 'Vibe compacted the context: Context compacted', code: 'compaction' },
    ]);
  });

  it('entries it cannot read are unknown, never dropped', () => {
    const odd = [
      { type: 'message' },
      { ...base('x1', 'message'), role: 'system', content: [] },
      { ...base('x2', 'message'), role: 'assistant', content: 'not blocks' },
      { ...base('x3', 'effect'), detail: { kind: 'shell' }, state: { status: 'completed' } },
      { ...base('x4', 'effect'), title: 't', detail: { toolName: 'bash', kind: 'shell', input: { command: 'ls' } }, state: { status: 'exploded' } },
      { ...base('x5', 'callback'), callbackId: 'c', title: 'q', detail: {}, state: { status: 'open' } },
      { ...base('x6', 'checkpoint'), kind: 'relocation', message: 'Moved' },
      { ...base('x7', 'notice'), level: 'info', message: 'new', detail: { kind: 'brand_new' } },
      { ...base('x8', 'brand_new_entry') },
      { no: 'type' },
    ];
    const { events } = run(odd);
    expect(strip(events)).toEqual([...odd.map((raw) => ({ type: 'unknown', raw }))]);
    expect(strip(translateText(adapter, 'not json').events)).toEqual([{ type: 'unknown', raw: 'not json' }]);
  });
});

describe('vibe adapter: export.json (usage, cost, verdict)', () => {
  it('input = input_tokens - cached_input_tokens, cache_read = cached_input_tokens; no cache writes, no reasoning breakdown', () => {
    expect(run([]).summary.result.tokens).toEqual({ input: 900, output: 80, cache_read: 300, cache_write: null, reasoning: null });
  });

  it('Vibe’s cost is the reported cost only when its config priced the active model', () => {
    expect(run([], exported({ cost_usd: 0.0042 }, { input_price: 2, output_price: 6 })).summary.result.reported_cost_usd).toBe(0.0042);
    const unpriced = run([], exported({ cost_usd: 0 })).summary.result;
    expect(unpriced.reported_cost_usd).toBeNull();
    expect(unpriced.raw_usage).toMatchObject({ cost_usd: 0 });
    // A config whose active model is not among its models says nothing of prices.
    expect(run([], exported({ cost_usd: 1, config: { active_model: 'gone', models: {} } })).summary.result.reported_cost_usd).toBeNull();
  });

  it.each([
    ['a string count', { input_tokens: '1200', output_tokens: 80, cached_input_tokens: 300 }, 'usage.input_tokens', { input: null, output: 80, cache_read: 300 }],
    ['a cached count above the input', { input_tokens: 10, output_tokens: 80, cached_input_tokens: 300 }, 'usage.cached_input_tokens', { input: null, cache_read: null, output: 80 }],
    ['a negative output', { input_tokens: 10, output_tokens: -1, cached_input_tokens: 0 }, 'usage.output_tokens', { input: 10, output: null }],
  ])('%s makes its classes null (never 0), named in a warning', (_label, usage, field, tokens) => {
    const { events, summary } = run([], exported({ usage }));
    expect(strip(events)).toEqual([{ type: 'warning', code: 'unreadable_usage', message: expect.stringContaining(`export.json.${field} `) }]);
    expect(summary.result.tokens).toMatchObject(tokens);
  });

  it('a subagent that made model calls without reported usage makes the session’s tokens unknown; a spawn that failed before any call adds nothing', () => {
    const lost = run([], exported({ subagents: [{ session_id: 'c', status: 'failed', usage: null, steps: 2 }] })).summary.result.tokens;
    expect(lost).toMatchObject({ input: null, output: null, cache_read: null });
    const none = run([], exported({ subagents: [{ session_id: 'c', status: 'failed', usage: null, steps: null }] })).summary.result.tokens;
    expect(none).toMatchObject({ input: 900, output: 80, cache_read: 300 });
  });

  it.each([
    ['finished', false, null, []],
    ['turn_limit', true, null, [{ type: 'warning', message: 'Vibe stopped before finishing: turn_limit (stop reason limit)', code: 'turn_limit' }]],
    ['price_limit', true, null, [{ type: 'warning', message: 'Vibe stopped before finishing: price_limit (stop reason limit)', code: 'price_limit' }]],
    ['config_error', true, { message: 'bad config', code: null }, [{ type: 'error', message: 'bad config', code: 'config_error' }]],
    ['infrastructure_failure', true, { message: 'API down', code: 'backend_error' }, [{ type: 'error', message: 'API down', code: 'backend_error' }]],
    ['aborted', true, { message: 'server said stop' }, [{ type: 'error', message: 'server said stop', code: 'aborted' }]],
  ])('outcome %s -> is_error %s', (outcome, isError, error, events) => {
    const result = run([], exported({ outcome, error, stop_reason: outcome === 'finished' || error ? null : 'limit' }));
    expect(strip(result.events)).toEqual(events);
    expect(result.summary.result.is_error).toBe(isError);
  });

  it('an outcome this version does not know leaves the verdict unset and is unknown', () => {
    const { events, summary } = run([], exported({ outcome: 'brand_new' }));
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { outcome: 'brand_new', stop_reason: null, error: null } }]);
    expect(summary.result.is_error).toBeUndefined();
    expect(summary.result.tokens).toMatchObject({ input: 900 });
  });

  it('no export (Vibe killed before it wrote one): no usage, no verdict; an unreadable one is unknown', () => {
    const missing = run([said('a1', 'x')], null).summary.result;
    expect(missing).toMatchObject({ tokens: null, raw_usage: null, reported_cost_usd: null });
    expect(missing.is_error).toBeUndefined();
    const broken = run([], '{"outcome":');
    expect(strip(broken.events)).toEqual([{ type: 'unknown', raw: '{"outcome":' }]);
    expect(broken.summary.result.tokens).toBeNull();
    expect(strip(run([], '{"usage":{}}').events)).toEqual([{ type: 'unknown', raw: { usage: {} } }]);
  });

  it('the export’s session id is the session’s', () => {
    expect(run([], exported({ session_id: 'from-export' })).summary.result.session_id).toBe('from-export');
  });
});

describe('vibe adapter: invocation', () => {
  it('headless streaming, auto-approve, trust; VIBE_HOME and the output dir inside HOME; export.json as a side document', () => {
    const inv = adapter.invocation({ model: 'devstral-medium-latest', prompt: '--help me', workdir: '/w', home: '/h/' });
    expect(inv.argv).toEqual(['vibe', '--prompt=--help me', '--output', 'streaming', '--auto-approve', '--trust', '--output-dir', `/h/${OUTPUT_DIR}`]);
    expect(inv.env).toMatchObject({ VIBE_HOME: '/h/.vibe', VIBE_ACTIVE_MODEL: 'devstral-medium-latest' });
    expect(inv.stdin).toBe('close');
    expect(inv.sideFiles).toEqual([{ name: EXPORT_REPORT, path: `${OUTPUT_DIR}/export.json`, read: 'document' }]);
    expect(inv.files.map((f) => f.path)).toEqual(['.vibe/config.toml']);
    expect(JSON.stringify(inv)).not.toContain('{tcab:api_key}');
  });

  it('a continued session resumes by id', () => {
    expect(adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h', resumeSessionId: 's-1' }).argv.at(-1)).toBe('--resume=s-1');
  });

  it('config.toml: Mistral’s API with Vibe’s Mistral backend, or the stub/gateway at <base>/v1 with the generic one; the model as named; the key by variable', () => {
    const real = vibeConfig('devstral-medium-latest', undefined);
    expect(real).toContain(`api_base = "${MISTRAL_API_BASE}"`);
    expect(real).toContain('backend = "mistral"');
    expect(real).toContain('api_key_env_var = "MISTRAL_API_KEY"');
    expect(real).toMatch(/\[\[models\]\]\nname = "devstral-medium-latest"\nprovider = "tcab"\nalias = "devstral-medium-latest"/);
    expect(real).toMatch(/enable_telemetry = false[\s\S]*\[experiments\]\nenable = false/);
    const stub = vibeConfig('a"b', 'http://127.0.0.1:9/');
    expect(stub).toContain('api_base = "http://127.0.0.1:9/v1"');
    expect(stub).toContain('backend = "generic"');
    // A quote in a model id stays inside its TOML string.
    expect(stub).toContain('name = "a\\"b"');
  });
});
