import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import droidAdapter from './adapter.ts';
import { droidToolKind } from './map-droid-tools.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('droid').manifest;
const adapter = droidAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-droid';

describe('droid adapter: recorded transcripts', () => {
  it('0.215.0 reference session: the doubled reasoning record counts once; exit codes and read ranges from their fixed texts', () => {
    const { events, summary } = translateFixture(adapter, fixture('droid-0.215.0-stream-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'Execute' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'Create' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'Read' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'Edit' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'Grep' },
      { type: 'search', query: '**/*.txt', path: W, is_success: true, tool_name: 'Glob' },
      { type: 'list', path: W, is_success: true, tool_name: 'LS' },
      { type: 'skill', path: '/scratch/h-droid/.factory/skills/demo/SKILL.md', skill_name: 'demo', is_success: true, tool_name: 'Skill' },
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'call_mock20', subagent_name: 'worker' },
      { type: 'orchestration', action: 'subagent_failed', subagent_id: 'call_mock20', subagent_name: 'worker', is_success: false },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Execute' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 11 calls x 900 non-cached input (input_tokens is already uncached here), 300 cache read, 80 output.
    expect(summary.result).toMatchObject({ session_id: 'c9e67fa9-7af1-4632-bed2-db7527289dcd', tokens: { input: 9900, output: 880, cache_read: 3300, cache_write: 0, reasoning: null }, reported_cost_usd: null });
  });

  it('recorded against the newest installable release: 0 unknown', () => {
    expect(translateFixture(adapter, fixture('droid-0.215.0-tools.jsonl')).events.filter((e) => e.type === 'unknown')).toEqual([]);
  });

  it('an API error is reported by both the agent loop and the CLI, each once', () => {
    const { events } = translateFixture(adapter, fixture('droid-0.215.0-error-400.jsonl'), { exitCode: 1 });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'error', message: '400 mock bad request', code: 'agent_loop' },
      { type: 'error', message: 'Exec failed', code: 'cli' },
    ]);
  });
});

describe('droid adapter: tools and invocation', () => {
  it.each([
    ['Execute', 'command'], ['Read', 'read'], ['Create', 'write'], ['Edit', 'write'], ['ApplyPatch', 'write'], ['Grep', 'search'], ['Glob', 'search'], ['LS', 'list'], ['Skill', 'skill'], ['Task', 'subagent'],
    ['TodoWrite', 'other'], ['FetchUrl', 'other'], ['WebSearch', 'other'], ['ProposeMission', 'other'], ['Script', 'other'], ['AskUser', 'other'],
  ])('%s -> %s', (tool, kind) => {
    expect(droidToolKind(tool)).toBe(kind);
  });

  it('a skill result without a file path is unknown, never a guessed path', () => {
    const { events } = translateText(adapter, [JSON.stringify({ type: 'tool_call', id: 'c', toolId: 'Skill', parameters: { skill: 'demo' } }), JSON.stringify({ type: 'tool_result', id: 'c', toolId: 'Skill', isError: false, value: 'Skill "demo" is now active.' })].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it('a base URL becomes a BYOK custom model whose key the driver fills in; the native binary is run directly', () => {
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9' });
    expect(inv.argv).toEqual(['droid', 'exec', '-o', 'stream-json', '--skip-permissions-unsafe', '-m', 'custom:mock-model', 'p']);
    const settings = JSON.parse(inv.files[0]!.content);
    expect(settings.customModels[0]).toMatchObject({ model: 'mock-model', baseUrl: 'http://127.0.0.1:9/v1', apiKey: API_KEY_PLACEHOLDER, provider: 'generic-chat-completion-api' });
    expect(manifest.install).toMatchObject({ npm_package: 'droid', platform_package: '@factory/cli-linux-x64', bin_path: 'lib/node_modules/@factory/cli-linux-x64/bin/droid' });
  });
});
