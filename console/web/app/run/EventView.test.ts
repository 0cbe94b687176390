// Each event type rendered for what it is, as markup (preact-render-to-string: the component is pure, no DOM needed).
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type { FeedItem } from '../../../../shared/console.ts';
import type { HarnessEvent } from '../../../../shared/events.ts';
import { EventView } from './EventView.tsx';

const T = '2026-12-05T12:00:07Z';
const render = (event: HarnessEvent, extra: Partial<FeedItem> = {}, open = false) =>
  renderToString(h(EventView, { item: { seq: 42, at: T, event, ...extra }, index: 3, count: 10, startMs: Date.parse('2026-12-05T12:00:00Z'), highlighted: false, open, onToggle: () => undefined }));
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/\s+/g, ' ').trim();

describe('EventView', () => {
  it('carries the deep-link anchor and the test hooks', () => {
    const html = render({ type: 'agent', timestamp: T, message: 'hello' });
    expect(html).toMatch(/<article id="seq-42"[^>]*data-seq="42"[^>]*data-type="agent"/);
    expect(html).toContain('href="#seq-42"');
    expect(text(html)).toContain('+0:07.0');
    expect(html).toContain('aria-posinset="4"');
  });

  it('reasoning is collapsed unless the reader opened it', () => {
    expect(render({ type: 'reasoning', timestamp: T, message: 'because' })).toMatch(/<details>(?!.*open)/);
    expect(render({ type: 'reasoning', timestamp: T, message: 'because' }, {}, true)).toContain('<details open');
  });

  it('a command shows itself, its exit code and success in words', () => {
    const failed = text(render({ type: 'command', timestamp: T, command: 'npm test', exit_code: 1, is_success: false, working_directory: '/w' }));
    expect(failed).toContain('npm test');
    expect(failed).toContain('✗ failed · exit 1');
    expect(failed).toContain('in /w');
    expect(text(render({ type: 'command', timestamp: T, command: 'ls', exit_code: 0 }))).toContain('✓ ok · exit 0');
  });

  it('reads and writes show the path and line range', () => {
    const read = text(render({ type: 'read', timestamp: T, path: 'src/a.ts', start_line: 10, end_line: 20, is_success: true }));
    expect(read).toContain('src/a.ts :10-20');
    expect(read).toContain('lines 10-20');
    expect(text(render({ type: 'write', timestamp: T, path: 'b.txt' }))).toContain('b.txt');
  });

  it('search, list, skill and subagent start/finish', () => {
    expect(text(render({ type: 'search', timestamp: T, query: 'TODO', path: 'src' }))).toContain('TODO in src');
    expect(text(render({ type: 'list', timestamp: T }))).toContain('.');
    expect(text(render({ type: 'skill', timestamp: T, path: 'SKILL.md', skill_name: 'pdf' }))).toContain('pdf SKILL.md');
    expect(text(render({ type: 'orchestration', timestamp: T, action: 'subagent_started', subagent_name: 'explorer' }))).toContain('Subagent explorer started');
    expect(text(render({ type: 'orchestration', timestamp: T, action: 'subagent_completed', subagent_id: 'a1' }))).toContain('Subagent a1 finished');
  });

  it("warnings and errors show the harness's own output and code; unknown output its raw JSON; system its stage", () => {
    expect(text(render({ type: 'error', timestamp: T, message: 'npm ERR! 404', code: 'install_harness_failed' }))).toContain('code install_harness_failed npm ERR! 404');
    expect(text(render({ type: 'warning', timestamp: T, message: 'deprecated' }))).toContain('deprecated');
    expect(text(render({ type: 'unknown', timestamp: T, raw: { kind: 'x' }, original_bytes: 99_000 }))).toMatch(/"kind": "x" .*cut from 99,000 bytes/);
    expect(text(render({ type: 'system', timestamp: T, stage: 'install_harness', status: 'failed', message: 'exit 1' }))).toContain('install harness failed — exit 1');
  });

  it('an event that broke the contract says why', () => {
    expect(text(render({ type: 'unknown', timestamp: T, raw: 'garbage' }, { invalid: 'not JSON' }))).toContain('Shown as raw output: not JSON');
  });
});
