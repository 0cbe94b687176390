import { describe, expect, it } from 'vitest';
import { SECRET_MARKER, SecretScrubber } from './scrub.ts';
import { HarnessEvent } from '../shared/events.ts';

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

describe('SecretScrubber on values', () => {
  it('finding 6: a digits-only secret is scrubbed from strings, keys and numbers without touching JSON syntax', () => {
    const s = new SecretScrubber();
    s.add('123456789');
    const dirty = { type: 'agent', message: 'key=123456789', tokens: 123456789, other: 1234567890, small: 42, nested: [{ '123456789': true }] };
    const clean = s.value(dirty);
    const wire = JSON.stringify(clean);
    expect(wire).not.toContain('123456789');
    expect(JSON.parse(wire)).toEqual({
      type: 'agent',
      message: `key=${SECRET_MARKER}`,
      tokens: SECRET_MARKER,
      other: `${SECRET_MARKER}0`,
      small: 42,
      nested: [{ [SECRET_MARKER]: true }],
    });
    // The input is never modified; what did not change is shared.
    expect(dirty.tokens).toBe(123456789);
    const untouched = { a: { b: [1, 'x'] } };
    const mixed = { keep: untouched, change: '123456789' };
    expect((s.value(mixed) as typeof mixed).keep).toBe(untouched);
  });

  it('finding 6: an event whose number field held the secret is published as a valid unknown carrying the scrubbed record', () => {
    const s = new SecretScrubber();
    s.add('123456789');
    const event = { type: 'command', timestamp: '2026-12-02T10:00:00.000Z', command: 'exit', exit_code: 123456789 } as const;
    const published = s.event(event, () => '2026-12-02T10:00:01.000Z');
    expect(HarnessEvent.safeParse(published).success).toBe(true);
    expect(published).toEqual({ type: 'unknown', timestamp: '2026-12-02T10:00:01.000Z', raw: { ...event, exit_code: SECRET_MARKER } });
    const clean = { type: 'agent', timestamp: '2026-12-02T10:00:00.000Z', message: 'hi' } as const;
    expect(s.event(clean, () => 'unused')).toBe(clean);
  });

  it('covers base64 (any alignment, with or without padding), base64url, percent-encoding and JSON escaping', () => {
    const secret = 'sk-ant-fake-canary-??>>~~/x';
    const s = new SecretScrubber();
    s.add(secret);
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const base64 = Buffer.from(`${prefix}${secret}tail`).toString('base64');
      const base64url = Buffer.from(`${prefix}${secret}tail`).toString('base64url');
      for (const encoded of [base64, base64url]) {
        const scrubbed = s.text(`Authorization: Basic ${encoded}`);
        expect(scrubbed).toContain(SECRET_MARKER);
        // What is left cannot be decoded back to the secret.
        expect(Buffer.from(scrubbed.replace('Authorization: Basic ', ''), 'base64').toString('latin1')).not.toContain('canary');
      }
    }
    expect(s.text(`https://x.invalid/?key=${encodeURIComponent(secret)}`)).toBe(`https://x.invalid/?key=${SECRET_MARKER}`);
    expect(s.text(JSON.stringify({ k: secret }))).toBe(`{"k":"${SECRET_MARKER}"}`);
  });

  it('finding 3: walks a value nested 100,000 deep without recursion, and leaves a cycle alone instead of looping', () => {
    const s = new SecretScrubber();
    s.add('sk-ant-fake-canary-0000');
    let deep: unknown = ['sk-ant-fake-canary-0000'];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let cursor = s.value(deep) as unknown;
    for (let i = 0; i < 100_000; i++) cursor = (cursor as unknown[])[0];
    expect(cursor).toEqual([SECRET_MARKER]);
    const cyclic: Record<string, unknown> = { m: 'sk-ant-fake-canary-0000' };
    cyclic.self = cyclic;
    const scrubbed = s.value(cyclic) as Record<string, unknown>;
    expect(scrubbed.m).toBe(SECRET_MARKER);
    expect(scrubbed.self).toBe(cyclic);
  });
});
