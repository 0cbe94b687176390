import { describe, expect, it } from 'vitest';
import { fitJson } from './fit-payload.ts';

describe('fitJson', () => {
  it('returns small values unchanged', () => {
    expect(fitJson({ a: 'x' }, 100)).toEqual({ json: '{"a":"x"}', truncated: false });
  });

  it('cuts the longest strings with a marker naming the original size until it fits', () => {
    const value = { type: 'unknown', raw: { big: 'y'.repeat(5000), small: 'keep me' }, other: 'z'.repeat(300) };
    const { json, truncated } = fitJson(value, 1000);
    expect(truncated).toBe(true);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(1000);
    const parsed = JSON.parse(json);
    expect(parsed.type).toBe('unknown');
    expect(parsed.raw.small).toBe('keep me');
    expect(parsed.raw.big).toMatch(/^y+…\[tcab: truncated, original 5000 bytes\]$/);
  });

  it('counts multi-byte characters in bytes', () => {
    const { json } = fitJson({ m: '€'.repeat(2000) }, 1500);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(1500);
    expect(JSON.parse(json).m).toContain('original 6000 bytes');
  });
});
