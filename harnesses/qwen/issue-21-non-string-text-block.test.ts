// issue 21: the Claude-shaped translators had drifted apart. Qwen Code skipped a text block whose `text` is not a
// string: an `agent` result whose launch notice could not be read was taken for a finished subagent (a start and
// a completion nobody reported). Now such a result is `unknown`, as a block Claude Code or Amp cannot read is; and
// the three read an assistant message's blocks through one reader (shared/translate/anthropic-blocks.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAdapter } from '../registry.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

// Real Qwen Code 0.24.4 records (qwen-0.24.4-tools.jsonl: init, the agent call, its result, the summary) with the
// result's text as an array. Not a .jsonl: the property suite mutates well-typed recordings, and this one's point
// is a wrong-typed field.
const fixture = join(import.meta.dirname, 'fixtures', 'issue-21-non-string-text-block.chunks.txt');
const qwen = await loadAdapter('qwen');

describe('issue 21: a non-string text block', () => {
  it('qwen: an agent result whose text block is unreadable (its task_started missing) is unknown, not a completed subagent', () => {
    const { events } = translateFixture(qwen, fixture);
    const [call, result] = readFileSync(fixture, 'utf8').trim().split('\n').slice(1, 3).map((l) => JSON.parse(l) as { message: { content: unknown[] } });
    expect(strip(events)).toEqual([{ type: 'unknown', raw: { tool_use: call!.message.content[0], tool_result: result!.message.content[0] } }]);
  });

  it('qwen: the same result with its text readable is what it was before (a launch notice: unknown; anything else: the subagent ran)', () => {
    const lines = readFileSync(fixture, 'utf8').trim().split('\n');
    const withText = (text: string) => lines.map((l) => l.replace(/"content":\[\{"type":"text","text":\[("(?:[^"\\]|\\.)*")\]\}\]/, () => `"content":[{"type":"text","text":${JSON.stringify(text)}}]`)).join('\n');
    expect(withText('x')).not.toContain('"text":["');
    expect(strip(translateText(qwen, withText('Background agent launched successfully.')).events).map((e) => e.type)).toEqual(['unknown']);
    expect(strip(translateText(qwen, withText('Done: nothing to do.')).events)).toEqual([
      { type: 'orchestration', action: 'subagent_started', subagent_id: 'call_e', subagent_name: 'general-purpose' },
      { type: 'orchestration', action: 'subagent_completed', subagent_id: 'call_e', subagent_name: 'general-purpose', is_success: true },
    ]);
  });

  it.each(['claude', 'qwen', 'amp'])('%s: an assistant text block whose text is not a string is unknown with the raw block, between the blocks around it', async (slug) => {
    const adapter = await loadAdapter(slug);
    const record = { type: 'assistant', session_id: 'T-issue-21', message: { id: 'm1', content: [{ type: 'text', text: 'before' }, { type: 'text', text: ['not', 'a string'] }, { type: 'thinking', thinking: 7 }, { type: 'text', text: 'after' }] } };
    expect(strip(translateText(adapter, JSON.stringify(record)).events)).toEqual([
      { type: 'agent', message: 'before' },
      { type: 'unknown', raw: { type: 'text', text: ['not', 'a string'] } },
      { type: 'unknown', raw: { type: 'thinking', thinking: 7 } },
      { type: 'agent', message: 'after' },
    ]);
  });
});
