import { describe, expect, it } from 'vitest';
import { LineSplitter, splitLines } from './lines.ts';

function split(chunks: (string | Buffer)[], cap?: number) {
  const s = new LineSplitter(cap);
  const out = chunks.flatMap((c) => s.push(c));
  return [...out, ...s.end()];
}

describe('LineSplitter', () => {
  it('splits LF and CRLF lines and keeps a final line without newline', () => {
    expect(split(['a\r\nb\nc']).map((l) => l.text)).toEqual(['a', 'b', 'c']);
  });

  it('joins a line spread over many chunks, including a CRLF split across chunks', () => {
    const lines = split(['{"a":', '1}\r', '\n{"b"', ':2}\n']);
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', '{"b":2}']);
    expect(lines[0]!.bytes).toBe(7);
  });

  it('keeps empty lines as empty text (the session skips them)', () => {
    expect(split(['a\n\nb\n']).map((l) => l.text)).toEqual(['a', '', 'b']);
  });

  it('replaces invalid UTF-8 with U+FFFD instead of throwing', () => {
    const [line] = split([Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a])]);
    expect(line!.text).toBe('a\uFFFD\uFFFDb');
    expect(line!.bytes).toBe(4);
  });

  it('decodes a multi-byte character split across chunks', () => {
    const euro = Buffer.from('€\n');
    expect(split([euro.subarray(0, 1), euro.subarray(1)]).map((l) => l.text)).toEqual(['€']);
  });

  it('cuts a line past the cap, counts its full size and keeps only the cap in memory', () => {
    const splitter = new LineSplitter(10);
    const lines = [...splitter.push('x'.repeat(25)), ...splitter.push('y'.repeat(25) + '\nnext\n')];
    expect(lines).toEqual([
      { text: 'x'.repeat(10), bytes: 50, truncated: true },
      { text: 'next', bytes: 4, truncated: false },
    ]);
  });

  it('cuts a long line that arrives in one chunk', () => {
    expect(split(['abcdefghijkl\r\n'], 5)).toEqual([{ text: 'abcde', bytes: 12, truncated: true }]);
  });

  it('handles a 16 MiB line under the default cap', async () => {
    const big = Buffer.alloc(16 * 1024 * 1024, 0x61);
    async function* source() {
      for (let i = 0; i < big.length; i += 65536) yield big.subarray(i, i + 65536);
      yield Buffer.from('\n{"ok":true}\n');
    }
    const lines = [];
    for await (const l of splitLines(source())) lines.push(l);
    expect(lines).toHaveLength(2);
    expect(lines[0]!.truncated).toBe(true);
    expect(lines[0]!.bytes).toBe(16 * 1024 * 1024);
    expect(lines[0]!.text.length).toBe(8 * 1024 * 1024);
    expect(lines[1]!.text).toBe('{"ok":true}');
  });

  it('rejects a nonsensical cap', () => {
    expect(() => new LineSplitter(0)).toThrow(RangeError);
  });
});
