import { describe, expect, it } from 'vitest';
import { SECRET_MARKER, SecretScrubber } from './scrub.ts';
import { HarnessEvent } from '../shared/events.ts';
import { RunResult } from '../shared/run.ts';

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

describe('SecretScrubber on a run result', () => {
  const SECRET = '123456789'; // a fake digits-only key, as in finding 6
  const tokens = (input: number) => ({ input, output: 80, cache_read: 300, cache_write: 0, reasoning: null });
  const result: RunResult = {
    run_id: 'run-1', harness_slug: 'claude', harness_version: '2.1.197', model: 'm', canonical_model: null, outcome: 'succeeded', message: `done with ${SECRET}`,
    auth_mode: 'api-key', exit_code: 0, stages: [{ stage: 'run', status: 'completed', duration_ms: 5 }],
    sessions: [{ index: 0, session_id: 's1', exit_code: 0, signal: null, tokens: tokens(Number(SECRET)), reported_cost_usd: 0.5, is_error: false, duration_ms: Number(SECRET), counts: { agent: 2 } }],
    session_ids: ['s1'], tokens: tokens(Number(SECRET)), raw_usage: { input_tokens: Number(SECRET), note: SECRET }, reported_cost_usd: 0.5,
    actual_cost_usd: 0.4, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:01.000Z', event_count: 3,
  };

  it('finding 6: a token count equal to a digits-only key is null with a cost warning; the result stays valid against RunResult', () => {
    const s = new SecretScrubber();
    s.add(SECRET);
    const clean = s.result(result);
    expect(RunResult.safeParse(clean).success).toBe(true);
    expect(clean.tokens).toEqual({ ...tokens(0), input: null });
    expect(clean.sessions[0]!.tokens).toEqual({ ...tokens(0), input: null });
    expect(clean.cost_warnings).toEqual([
      'sessions.0.tokens.input: left out (null): its value contains a secret the driver handled',
      'tokens.input: left out (null): its value contains a secret the driver handled',
    ]);
    // raw_usage is free JSON: scrubbed whole, like any value; strings everywhere lose the secret.
    expect(clean.raw_usage).toEqual({ input_tokens: SECRET_MARKER, note: SECRET_MARKER });
    expect(clean.message).toBe(`done with ${SECRET_MARKER}`);
    // A field that cannot be null (the driver's own measured duration) keeps its value; nothing else is touched.
    expect(clean.sessions[0]!.duration_ms).toBe(Number(SECRET));
    expect({ ...clean, tokens: result.tokens, sessions: result.sessions, raw_usage: result.raw_usage, message: result.message, cost_warnings: [] }).toEqual(result);
  });

  it('a result without a secret is returned as it is', () => {
    const s = new SecretScrubber();
    s.add('sk-ant-fake-canary-0000000000');
    expect(s.result(result)).toBe(result);
  });
});
