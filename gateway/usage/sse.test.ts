import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { SseReader } from './sse.ts';
import { chunked } from '../../test/support/gateway-wire-bodies.ts';

/** The events' data as the reader hands it on, one string per dispatched event. */
function events(body: string | Uint8Array, sizes: readonly number[] = [], end = true): string[] {
  const out: string[] = [];
  let current: Buffer[] = [];
  const reader = new SseReader({
    data: (buf, from, to) => current.push(Buffer.from(buf.subarray(from, to))),
    dispatch: () => {
      out.push(Buffer.concat(current).toString('utf8'));
      current = [];
    },
  });
  for (const chunk of chunked(typeof body === 'string' ? Buffer.from(body) : body, sizes)) reader.push(chunk);
  if (end) reader.end();
  return out;
}

describe('SseReader', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('splits events on %s line ends, for every chunking', (_name, eol) => {
    const body = ['event: a', 'data: {"x":1}', '', ': a comment', 'id: 7', 'retry: 10', 'data:{"y":2}', 'data:  two spaces', 'data', '', '', 'data: é😀', ''].join(eol);
    const expected = ['{"x":1}', '{"y":2}\n two spaces\n', 'é😀'];
    expect(events(body)).toEqual(expected);
    for (let size = 1; size <= 7; size++) expect(events(body, [size])).toEqual(expected);
  });

  it('ignores fields that only start like data, and lines without a data field', () => {
    expect(events('datax: 1\ndat: 2\nDATA: 3\n data: 4\n\nevent: only\n\n')).toEqual([]);
  });

  it('dispatches an event the stream ended in (its data arrived, only the blank line did not)', () => {
    expect(events('data: {"a":1}\n\ndata: {"b":2}')).toEqual(['{"a":1}', '{"b":2}']);
    expect(events('data: {"a":1}\n\ndata: {"b":2}', [], false)).toEqual(['{"a":1}']);
  });

  it('a CR at the end of one chunk and an LF at the start of the next are one line end', () => {
    expect(events(Buffer.from('data: a\r\n\r\ndata: b\r\n\r\n'), [8])).toEqual(['a', 'b']);
    expect(events(Buffer.from('data: a\r\r\ndata: b\r\r'), [8])).toEqual(['a', 'b']);
  });

  it('hands a 50 MB data line on as it arrives, holding none of it', () => {
    let bytes = 0;
    let dispatched = 0;
    const reader = new SseReader({ data: (_buf, from, to) => (bytes += to - from), dispatch: () => (dispatched += 1) });
    const chunk = Buffer.alloc(1 << 20, 'a');
    reader.push(Buffer.from('data: '));
    for (let k = 0; k < 50; k++) reader.push(chunk);
    expect(bytes).toBe(50 << 20);
    reader.push(Buffer.from('\n\n'));
    expect(dispatched).toBe(1);
  });
});

describe('SseReader properties', () => {
  const line = fc.oneof(
    fc.string({ maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, '')}`),
    fc.constantFrom('', 'event: x', ': c', 'data', 'data:', 'id: 1'),
  );
  const eol = fc.constantFrom('\n', '\r\n', '\r');

  test.prop([fc.array(fc.tuple(line, eol), { maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 })], { numRuns: 300 })('any chunking gives the events of one chunk', (lines, sizes) => {
    const body = lines.map(([l, e]) => l + e).join('');
    expect(events(body, sizes)).toEqual(events(body));
  });

  test.prop([fc.uint8Array({ maxLength: 300 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 })], { numRuns: 300 })('any bytes: never throws', (bytes, sizes) => {
    expect(() => events(bytes, sizes)).not.toThrow();
  });
});
