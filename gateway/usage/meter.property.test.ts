// Properties of the meter over the stub's bodies on every wire (random usage, random content with multi-byte
// characters): any chunking gives what one chunk gives, which is the stub's usage; a body cut anywhere never
// throws and never reports a number the whole body would not (a class is the whole body's value or null);
// arbitrary bytes and mangled bodies never throw and always give a valid WireSample; and memory stays bounded
// whatever the size of a line, an event or a value.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { WireSample } from '../../shared/gateway.ts';
import { WIRE_PROTOCOLS } from '../../shared/gateway.ts';
import type { StubStep, StubUsage } from '../../shared/stub-script.ts';
import { TOKEN_CLASSES } from '../../shared/usage.ts';
import { usageMeter } from './index.ts';
import { expectedTokens, meter, sse, stubBodies } from '../../test/support/gateway-wire-bodies.ts';

const count = fc.integer({ min: 0, max: 2 ** 40 });
const usageArb: fc.Arbitrary<StubUsage> = fc
  .record({ input: count, cache_read: count, cache_write: count, reasoning: count, visible: count })
  .map(({ visible, ...u }) => ({ ...u, output: u.reasoning + visible }));
const text = fc.option(fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\n', '\r', 'é', '😀', '{', '}', ':', ',', 'data: ', '[DONE]', '\u2028'), maxLength: 40 }), { nil: undefined });
const stepArb: fc.Arbitrary<StubStep> = fc.record({
  thinking: text,
  text,
  tool: fc.option(fc.record({ name: fc.constantFrom('Bash', 'exec_command'), args: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) }), { nil: undefined }),
});
const model = fc.constantFrom('claude-sonnet-4-5', 'gpt-5', 'modèle-😀', 'qwen3-coder-plus');
const sizes = fc.array(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 10 });

describe('meter properties', () => {
  test.prop([stepArb, usageArb, model, sizes], { numRuns: 150 })("any chunking of the stub's body: the stub's usage, as one chunk gives it", (step, usage, name, cut) => {
    for (const body of stubBodies(step, usage, name)) {
      const options = { status: body.answer.status, contentType: body.answer.contentType };
      const whole = meter(body.protocol, body.answer.body, options);
      expect(whole).toEqual({ protocol: body.protocol, model: name, status: 200, streamed: body.streamed, tokens: expectedTokens(body.protocol, usage) });
      expect(meter(body.protocol, body.answer.body, { ...options, sizes: cut })).toEqual(whole);
    }
  });

  test.prop([stepArb, usageArb, fc.double({ min: 0, max: 1, noNaN: true }), sizes], { numRuns: 200 })('a body cut anywhere: each class is the whole body\'s or null, never another number', (step, usage, at, cut) => {
    for (const body of stubBodies(step, usage, 'm')) {
      const bytes = Buffer.from(body.answer.body);
      const whole = meter(body.protocol, bytes).tokens!;
      const prefix = bytes.subarray(0, Math.floor(at * bytes.length));
      const sample = meter(body.protocol, prefix, { sizes: cut });
      expect(WireSample.safeParse(sample).success).toBe(true);
      if (sample.tokens !== null) for (const cls of TOKEN_CLASSES) expect([whole[cls], null]).toContain(sample.tokens[cls]);
    }
  });

  const mangle = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ maxLength: 8 }) }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.integer({ min: 1, max: 30 }) }),
    fc.record({ kind: fc.constant('repeat' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.integer({ min: 1, max: 200 }) }),
  );
  test.prop([stepArb, usageArb, fc.array(mangle, { minLength: 1, maxLength: 6 }), sizes], { numRuns: 200 })('a mangled body never throws and gives a valid WireSample', (step, usage, edits, cut) => {
    for (const body of stubBodies(step, usage, 'm')) {
      let bytes = Buffer.from(body.answer.body);
      for (const edit of edits) {
        const at = Math.floor(edit.at * bytes.length);
        if (edit.kind === 'flip') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([edit.byte]), bytes.subarray(at + 1)]);
        else if (edit.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), edit.bytes, bytes.subarray(at)]);
        else if (edit.kind === 'delete') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + edit.length)]);
        else bytes = Buffer.concat([bytes.subarray(0, at + edit.length), bytes.subarray(at)]);
      }
      const sample = meter(body.protocol, bytes, { sizes: cut });
      expect(WireSample.safeParse(sample).success).toBe(true);
    }
  });

  test.prop([fc.constantFrom(...WIRE_PROTOCOLS), fc.uint8Array({ maxLength: 500 }), sizes, fc.constantFrom(200, 429)], { numRuns: 300 })('arbitrary bytes never throw and give a valid WireSample', (protocol, bytes, cut, status) => {
    expect(WireSample.safeParse(meter(protocol, bytes, { status, sizes: cut })).success).toBe(true);
  });

  test.prop([fc.constantFrom(...WIRE_PROTOCOLS), fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 6 }), fc.boolean(), sizes], { numRuns: 300 })('any JSON, as a body or as SSE events: a valid WireSample, counts non-negative integers', (protocol, values, asSse, cut) => {
    const body = asSse ? sse(values.map((v) => [null, v] as const)) : JSON.stringify(values.length === 1 ? values[0] : values);
    const sample = meter(protocol, body, { sizes: cut });
    expect(WireSample.safeParse(sample).success).toBe(true);
  });
});

describe('bounded memory', () => {
  const MiB = 1 << 20;
  /** Pushes `head`, then the same 1 MiB chunk `mib` times, then `tail`; returns the sample and the growth in memory. */
  function feed(protocol: (typeof WIRE_PROTOCOLS)[number], head: string, fill: number, mib: number, tail: string) {
    const m = usageMeter(protocol, { status: 200, contentType: 'text/event-stream' });
    const chunk = Buffer.alloc(MiB, fill);
    m.push(Buffer.from(head));
    const before = process.memoryUsage();
    for (let k = 0; k < mib; k++) m.push(chunk);
    const after = process.memoryUsage();
    m.push(Buffer.from(tail));
    return { sample: m.end(), grew: after.arrayBuffers - before.arrayBuffers + (after.heapUsed - before.heapUsed) };
  }

  it('an SSE data line of 50 MB without a newline is not held, and the events after it still count', () => {
    const head = sse([['message_start', { type: 'message_start', message: { model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }]]) + 'data: {"type":"content_block_delta","delta":{"text":"';
    const { sample, grew } = feed('anthropic', head, 0x61, 50, `"}}\n\n${sse([['message_delta', { type: 'message_delta', usage: { output_tokens: 9 } }]])}`);
    expect(grew).toBeLessThan(16 * MiB);
    expect(sample.tokens).toEqual({ input: 5, output: 9, cache_read: 0, cache_write: 0, reasoning: null });
  });

  it('50 MB of garbage in one SSE line: dropped, the stream goes on', () => {
    const { sample, grew } = feed('openai-chat', 'data: ', 0x7b, 50, `\n\n${sse([[null, { choices: [{ finish_reason: 'stop' }] }], [null, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }]])}`);
    expect(grew).toBeLessThan(16 * MiB);
    expect(sample.tokens).toEqual({ input: 3, output: 4, cache_read: 0, cache_write: null, reasoning: 0 });
  });

  it('a 50 MB usage object is dropped (past the 64 KiB capture cap), not held', () => {
    const { sample, grew } = feed('openai-responses', 'data: {"type":"response.completed","response":{"usage":{"input_tokens":1,"x":"', 0x61, 50, '"}}}\n\n');
    expect(grew).toBeLessThan(16 * MiB);
    expect(sample.tokens).toBeNull();
  });

  it('a JSON body with 50 MB of text before its usage: found, nothing held', () => {
    const m = usageMeter('gemini', { status: 200, contentType: 'application/json' });
    const { sample, grew } = (() => {
      const chunk = Buffer.alloc(MiB, 0x62);
      m.push(Buffer.from('{"candidates":[{"content":{"parts":[{"text":"'));
      const before = process.memoryUsage();
      for (let k = 0; k < 50; k++) m.push(chunk);
      const after = process.memoryUsage();
      m.push(Buffer.from('"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20},"modelVersion":"gemini-2.5-flash"}'));
      return { sample: m.end(), grew: after.arrayBuffers - before.arrayBuffers + (after.heapUsed - before.heapUsed) };
    })();
    expect(grew).toBeLessThan(16 * MiB);
    expect(sample).toEqual({ protocol: 'gemini', model: 'gemini-2.5-flash', status: 200, streamed: false, tokens: { input: 10, output: 20, cache_read: 0, cache_write: null, reasoning: 0 } });
  });
});
