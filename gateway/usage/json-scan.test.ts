import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ITEM, JsonScanner } from './json-scan.ts';
import type { JsonPath, JsonScanEnd, JsonScanLimits } from './json-scan.ts';
import { chunked } from '../../test/support/gateway-wire-bodies.ts';

function scan(paths: readonly JsonPath[], body: string | Uint8Array, sizes: readonly number[] = [], limits?: JsonScanLimits): { values: [number, unknown][]; end: JsonScanEnd } {
  const values: [number, unknown][] = [];
  const scanner = new JsonScanner(paths, (path, value) => values.push([path, value]), limits);
  for (const chunk of chunked(typeof body === 'string' ? Buffer.from(body) : body, sizes)) scanner.push(chunk);
  return { values, end: scanner.end() };
}

/** Every way of cutting a body in two and in three (small bodies only). */
function everyCut(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [[bytes]];
  for (let a = 1; a < bytes.length; a++) {
    out.push([bytes.subarray(0, a), bytes.subarray(a)]);
    for (let b = a + 1; b < bytes.length; b += 3) out.push([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]);
  }
  return out;
}

describe('JsonScanner', () => {
  const paths: JsonPath[] = [['usage'], ['message', 'usage'], ['model'], [ITEM, 'usageMetadata'], ['choices', ITEM, 'finish_reason']];

  it('finds the values at its paths, in body order, and nothing that only looks like them', () => {
    const body = JSON.stringify({
      text: 'a "usage": {"input_tokens": 9} inside a string',
      nested: { usage: { input_tokens: 8 }, model: 'deeper' },
      model: 'claude-é',
      choices: [{ finish_reason: null }, { finish_reason: 'stop', usage: 1 }],
      message: { usage: { input_tokens: 1, output_tokens: 2 } },
      usage: { input_tokens: 3, cache: [1, 2, { x: true }], f: -1.5e3, n: null },
    });
    const { values, end } = scan(paths, body);
    expect(values).toEqual([
      [2, 'claude-é'],
      [4, null],
      [4, 'stop'],
      [1, { input_tokens: 1, output_tokens: 2 }],
      [0, { input_tokens: 3, cache: [1, 2, { x: true }], f: -1500, n: null }],
    ]);
    expect(end).toEqual({ top: 'object', complete: true, failed: false });
  });

  it('gives the same values for every cut of the body (inside strings, escapes, numbers, UTF-8 characters)', () => {
    const body = Buffer.from('{"t":"x\\"\\u00e9y","model":"m\u00e9\u{1F600}","\\u0075sage":{"a":12,"b":[true,false,null]},"n":-0.5e+2}');
    const whole = scan(paths, body);
    expect(whole.values).toEqual([
      [2, 'mé😀'],
      [0, { a: 12, b: [true, false, null] }],
    ]);
    for (const chunks of everyCut(body)) {
      const values: [number, unknown][] = [];
      const scanner = new JsonScanner(paths, (path, value) => values.push([path, value]));
      for (const chunk of chunks) scanner.push(chunk);
      expect({ values, end: scanner.end() }).toEqual(whole);
    }
  });

  it('reads the elements of a top-level array (Gemini streamed JSON)', () => {
    const body = '[{"usageMetadata":{"promptTokenCount":1}}\r\n,\r\n{"usageMetadata":{"promptTokenCount":2}}]';
    expect(scan(paths, body, [5])).toEqual({
      values: [
        [3, { promptTokenCount: 1 }],
        [3, { promptTokenCount: 2 }],
      ],
      end: { top: 'array', complete: true, failed: false },
    });
  });

  it.each([
    ['a stray comma', '{"a":1,,"usage":{"x":1}}'],
    ['a missing colon', '{"a" 1,"usage":{"x":1}}'],
    ['a bad literal', '{"a":tru,"usage":{"x":1}}'],
    ['a bad escape', '{"a":"\\q","usage":{"x":1}}'],
    ['a bad \\u escape', '{"a":"\\u12G4","usage":{"x":1}}'],
    ['a mismatched bracket', '{"a":[1},"usage":{"x":1}}'],
    ['bytes outside any value', '{"a":1 x,"usage":{"x":1}}'],
  ])('stops at %s: nothing after the error is read', (_what, body) => {
    const { values, end } = scan(paths, body);
    expect(values).toEqual([]);
    expect(end.failed).toBe(true);
  });

  it('keeps what arrived whole before an error or a cut', () => {
    expect(scan(paths, '{"usage":{"x":1},"model":"m" garbage')).toEqual({ values: [[0, { x: 1 }], [2, 'm']], end: { top: 'object', complete: false, failed: true } });
    expect(scan(paths, '{"usage":{"x":1},"model":"unfinish')).toEqual({ values: [[0, { x: 1 }]], end: { top: 'object', complete: false, failed: false } });
    expect(scan(paths, '{"usage":{"x":1}} trailing').end).toEqual({ top: 'object', complete: true, failed: true });
  });

  it('drops a captured value past the capture cap, holding at most the cap meanwhile', () => {
    const limits = { maxDepth: 64, maxCaptureBytes: 1024, maxKeyBytes: 32 };
    const values: [number, unknown][] = [];
    const scanner = new JsonScanner(paths, (path, value) => values.push([path, value]), limits);
    scanner.push(Buffer.from('{"usage":{"big":"'));
    const filler = Buffer.alloc(300, 'a');
    let most = 0;
    for (let k = 0; k < 100; k++) {
      scanner.push(filler);
      most = Math.max(most, scanner.heldBytes);
    }
    scanner.push(Buffer.from('"},"model":"m"}'));
    expect(most).toBeLessThanOrEqual(1024);
    expect(values).toEqual([[2, 'm']]);
    expect(scanner.end().complete).toBe(true);
  });

  it('stops past its nesting limit, and an over-long key matches nothing', () => {
    const limits = { maxDepth: 8, maxCaptureBytes: 1024, maxKeyBytes: 5 };
    expect(scan(paths, `{"model":"m","d":${'['.repeat(20)}${']'.repeat(20)},"usage":1}`, [], limits)).toEqual({ values: [[2, 'm']], end: { top: 'object', complete: false, failed: true } });
    expect(scan([['usage']], '{"usage":1}', [], { ...limits, maxKeyBytes: 4 }).values).toEqual([]);
  });

  it('reports a top-level scalar, a number ending with the input included', () => {
    expect(scan(paths, ' 42 ').end).toEqual({ top: 'scalar', complete: true, failed: false });
    expect(scan(paths, '42').end).toEqual({ top: 'scalar', complete: true, failed: false });
    expect(scan(paths, '').end).toEqual({ top: null, complete: false, failed: false });
  });

  it('starts over on reset (one scanner per SSE stream, one document per event)', () => {
    const values: unknown[] = [];
    const scanner = new JsonScanner([['usage']], (_path, value) => values.push(value));
    scanner.push(Buffer.from('{"usage":{"a":'));
    scanner.reset();
    scanner.push(Buffer.from('{"usage":{"b":2}}'));
    expect(scanner.end().complete).toBe(true);
    expect(values).toEqual([{ b: 2 }]);
  });
});

describe('JsonScanner properties', () => {
  const key = fc.constantFrom('usage', 'model', 'x', 'us\\u0061ge', 'm', 'é');
  const doc = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
  const sizes = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 });

  test.prop([doc, sizes, fc.boolean()], { numRuns: 300 })('the value at a path is what JSON.parse gives, for any chunking and spacing', (object, cut, pretty) => {
    const text = JSON.stringify(object, null, pretty ? 2 : undefined).replaceAll('"us\\\\u0061ge"', '"us\\u0061ge"');
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const { values, end } = scan([['usage'], ['model']], text, cut);
    // JSON.parse keeps the last of duplicate keys ("usage" and "us\u0061ge"); the scanner reports each, in order.
    const expected = new Map<number, unknown>();
    for (const [k, v] of Object.entries(parsed)) if (k === 'usage' || k === 'model') expected.set(k === 'usage' ? 0 : 1, v);
    expect(new Map(values)).toEqual(expected);
    expect(end).toEqual({ top: 'object', complete: true, failed: false });
  });

  test.prop([fc.uint8Array({ maxLength: 400 }), sizes], { numRuns: 500 })('any bytes: never throws, every value it reports is JSON.parse-able JSON', (bytes, cut) => {
    const { values } = scan([['usage'], [ITEM], []], bytes, cut);
    for (const [, value] of values) expect(() => JSON.stringify(value)).not.toThrow();
  });
});
