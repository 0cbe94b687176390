import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import kiloAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('kilo').manifest;
const adapter = kiloAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const W = '/scratch/work-kilo';

describe('kilo adapter (OpenCode family)', () => {
  it('7.7.7 reference session: records with Kilo’s extra fields (metrics, approval) map like OpenCode’s, 0 unknown', () => {
    const { events, summary } = translateFixture(adapter, fixture('kilo-7.7.7-run-json.jsonl'));
    expect(strip(events)).toEqual([
      { type: 'reasoning', message: 'I should look at the directory first.' },
      { type: 'agent', message: 'Let me list files.' },
      { type: 'command', command: 'ls -la && echo hi', exit_code: 0, is_success: true, tool_name: 'bash' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'write' },
      { type: 'read', path: `${W}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read' },
      { type: 'write', path: `${W}/hello.txt`, is_success: true, tool_name: 'edit' },
      { type: 'search', query: 'hello', path: W, is_success: true, tool_name: 'grep' },
      { type: 'search', query: '**/*.txt', is_success: true, tool_name: 'glob' },
      { type: 'command', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'bash' },
      { type: 'agent', message: 'All done.' },
    ]);
    // 8 steps x {900 uncached, 68 + 12 reasoning output, 300 cache read}.
    expect(summary.result).toMatchObject({ session_id: 'ses_dc87913e3ffeBnFAy3JtpBaUsT', tokens: { input: 7200, output: 640, reasoning: 96, cache_read: 2400, cache_write: 0 } });
  });

  it('recorded against the newest installable release: subagent and skill included, 0 unknown', () => {
    const { events } = translateFixture(adapter, fixture('kilo-7.7.7-tools.jsonl'));
    expect(events.filter((e) => e.type === 'unknown')).toEqual([]);
    expect(events.filter((e) => e.type === 'orchestration')).toHaveLength(2);
  });

  it('the same release where ripgrep is missing (Kilo cannot download its own offline): grep and glob are failed searches; the failed skill names no file, so it stays unknown, never a guessed path', () => {
    const { events } = translateFixture(adapter, fixture('kilo-7.7.7-tools-no-ripgrep.jsonl'));
    expect(strip(events).filter((e) => e.type === 'search').map((e) => e.is_success)).toEqual([false, false]);
    expect(events.filter((e) => e.type === 'skill')).toEqual([]);
    expect(strip(events).filter((e) => e.type === 'unknown')).toEqual([{ type: 'unknown', raw: expect.objectContaining({ tool: 'skill', state: expect.objectContaining({ status: 'error', input: { name: 'demo' } }) }) }]);
  });

  it.each(['background_process', 'board_post', 'board_read', 'schedule_wakeup', 'cancel_wakeup', 'kilo_local_recall'])('Kilo’s own %s tool has no event type: unknown', (tool) => {
    const { events } = translateText(adapter, JSON.stringify({ type: 'tool_use', sessionID: 's', part: { type: 'tool', tool, callID: 'c', state: { status: 'completed', input: {}, output: 'ok' } } }));
    expect(events.map((e) => e.type)).toEqual(['unknown']);
  });

  it('installs the newest version published for both the CLI and its native package, and writes Kilo’s own config path', () => {
    expect(manifest.install?.platform_package).toBe('@kilocode/cli-linux-x64');
    const inv = adapter.invocation({ model: 'mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:9' });
    expect(inv.argv.slice(0, 2)).toEqual(['kilo', 'run']);
    expect(inv.files[0]!.path).toBe('.config/kilo/kilo.json');
  });
});
