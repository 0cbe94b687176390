import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_DEPTH, MAX_MESSAGE_DEPTH, jsonTextNestsDeeperThan, nestedDeeperThan } from './json-depth.ts';
import { MAX_JSON_DEPTH as ENGINE_DEPTH } from './translate/json-line.ts';
import { MAX_JSON_DEPTH as READER_DEPTH, decodeStreamMessage } from '../nats/stream-message.ts';
import { listHarnesses, loadAdapter } from '../harnesses/registry.ts';
import { translateText } from '../test/support/translate-fixture.ts';

/** A JSON object nested exactly `depth` levels (top level = 1), its deepest level holding `leaf`. */
function nestedObject(depth: number, leaf: unknown = 1): Record<string, unknown> {
  let value: unknown = leaf;
  for (let level = 1; level < depth; level++) value = { n: value };
  return { n: value };
}

describe('one nesting bound for JSON tcab did not write (issue 19)', () => {
  it('finding 3: the engine and the stream reader take their limits from shared/json-depth.ts, the engine the smaller', () => {
    expect(ENGINE_DEPTH).toBe(MAX_LINE_DEPTH);
    expect(READER_DEPTH).toBe(MAX_MESSAGE_DEPTH);
    expect(MAX_LINE_DEPTH).toBeLessThan(MAX_MESSAGE_DEPTH);
  });

  it('finding 3: whatever an adapter makes of the deepest line the engine accepts, tcab events follow|tail read it as an event', async () => {
    // Each record kind that reaches an adapter wraps the line differently; every adapter gets the deepest line in
    // the places its records carry free JSON: a whole record, a field of a known-looking one, a tool input.
    const deepest = (wrap: (inner: unknown) => object) => {
      let probe = 0;
      for (let inner = MAX_LINE_DEPTH; inner > 0; inner--) {
        probe = inner;
        if (!nestedDeeperThan(wrap(nestedObject(inner)), MAX_LINE_DEPTH)) break;
      }
      return JSON.stringify(wrap(nestedObject(probe)));
    };
    const lines = [
      deepest((x) => ({ type: 'brand_new', x })),
      deepest((x) => ({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: x } }] } })),
      deepest((x) => ({ type: 'tool_use', tool_name: 'mcp_tool', tool_id: 't1', parameters: x })),
      deepest((x) => ({ type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: 'mcp', toolCallId: 't1', input: x } })),
    ];
    for (const line of lines) expect(nestedDeeperThan(JSON.parse(line), MAX_LINE_DEPTH)).toBe(false);
    for (const { manifest: { slug } } of listHarnesses()) {
      const { events } = translateText(await loadAdapter(slug), lines.join('\n'));
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        const item = decodeStreamMessage({ subject: `tcab.run.r.event.${event.type}`, header: () => undefined, data: new TextEncoder().encode(JSON.stringify(event)) }, () => new Date());
        expect({ slug, kind: item.kind }).toEqual({ slug, kind: 'event' });
      }
    }
  });

  it('the text walk and the value walk agree on any JSON value and limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.nat(14), (value, limit) => {
        expect(jsonTextNestsDeeperThan(JSON.stringify(value), limit)).toBe(nestedDeeperThan(value, limit));
      }),
      { seed: 19, numRuns: 500 },
    );
  });

  it('both walks hold at a million levels (no recursion)', () => {
    const text = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    expect(jsonTextNestsDeeperThan(text, 999_999)).toBe(true);
    expect(jsonTextNestsDeeperThan(text, 1_000_000)).toBe(false);
    expect(nestedDeeperThan(JSON.parse(text), 1_000_000)).toBe(false);
  });
});
