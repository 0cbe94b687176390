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
    addStep(totals, { tokens: { input: 900, output: 68, reasoning: 12, cache: { read: 300, write: 0 } }, cost: 0.002 });
    addStep(totals, { tokens: { input: 100, output: 10, reasoning: 0, cache: { read: 0, write: 50 } }, cost: 0.001 });
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
