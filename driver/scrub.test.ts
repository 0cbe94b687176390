import { describe, expect, it } from 'vitest';
import { SECRET_MARKER, SecretScrubber } from './scrub.ts';

describe('SecretScrubber', () => {
  it('replaces every occurrence in any nested field and leaves clean values untouched (same object)', () => {
    const s = new SecretScrubber();
    s.add('sk-ant-fake-canary-1234567890');
    const dirty = { type: 'command', command: 'echo sk-ant-fake-canary-1234567890', nested: { list: ['x sk-ant-fake-canary-1234567890 y'] } };
    expect(s.value(dirty)).toEqual({ type: 'command', command: `echo ${SECRET_MARKER}`, nested: { list: [`x ${SECRET_MARKER} y`] } });
    const clean = { type: 'agent', message: 'nothing here' };
    expect(s.value(clean)).toBe(clean);
  });

  it('ignores values too short to be secrets and replaces longer secrets before their substrings', () => {
    const s = new SecretScrubber();
    s.add('abc', undefined, '', 'token-1234567', 'token-1234567-extended');
    expect(s.size).toBe(2);
    expect(s.text('a token-1234567-extended b token-1234567 abc')).toBe(`a ${SECRET_MARKER} b ${SECRET_MARKER} abc`);
  });

  it('catches a secret in its JSON-escaped form', () => {
    const s = new SecretScrubber();
    s.add('pa"ss\\word-12345');
    expect(s.value({ m: 'pa"ss\\word-12345' })).toEqual({ m: SECRET_MARKER });
  });
});
