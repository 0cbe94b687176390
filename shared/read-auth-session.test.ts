// The stateless session: a round trip, and every way to forge one (fast-check mutates valid sessions). The MAC is
// compared with crypto.timingSafeEqual (spied), never with ===.
import { describe, expect, it, vi } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import * as crypto from 'node:crypto';
import { signSession, verifySession } from './read-auth-session.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof crypto>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const KEYS = { 'read-token': 'fake-read-token-abc', 'write-token': 'fake-write-token-xyz' };
const NOW = 1_796_000_000;
const DAY = 86_400;

describe('signSession / verifySession', () => {
  it('round-trips both credentials until the expiry, never at or after it', () => {
    for (const credential of ['read-token', 'write-token'] as const) {
      const value = signSession(credential, KEYS[credential], NOW + 60);
      expect(value).toMatch(/^[rw]\.\d+\.[A-Za-z0-9_-]{43}$/);
      expect(verifySession(value, KEYS, NOW, DAY)).toEqual({ credential, expiresAt: NOW + 60 });
      expect(verifySession(value, KEYS, NOW + 59, DAY)).toBeDefined();
      expect(verifySession(value, KEYS, NOW + 60, DAY)).toBeUndefined();
    }
  });

  it('holds no token: the value never contains the key, and keys differing by one character give unrelated MACs', () => {
    const a = signSession('read-token', KEYS['read-token'], NOW + 60);
    const b = signSession('read-token', `${KEYS['read-token']}!`, NOW + 60);
    expect(a).not.toContain(KEYS['read-token']);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('a rotated token or none configured verifies nothing made with the old one', () => {
    const value = signSession('read-token', KEYS['read-token'], NOW + 60);
    expect(verifySession(value, { ...KEYS, 'read-token': 'fake-rotated' }, NOW, DAY)).toBeUndefined();
    expect(verifySession(value, { ...KEYS, 'read-token': '' }, NOW, DAY)).toBeUndefined();
    // The other credential's rotation does not touch it.
    expect(verifySession(value, { ...KEYS, 'write-token': 'fake-rotated' }, NOW, DAY)).toBeDefined();
  });

  it('a lifetime shortened after the login applies to the sessions already out', () => {
    const value = signSession('read-token', KEYS['read-token'], NOW + DAY);
    expect(verifySession(value, KEYS, NOW, DAY)).toBeDefined();
    expect(verifySession(value, KEYS, NOW, 3600)).toBeUndefined();
  });

  it('refuses to sign with an empty key (it would be a MAC anyone can make)', () => {
    expect(() => signSession('read-token', '', NOW + 60)).toThrow(/non-empty/);
  });

  it('compares the MAC in constant time', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    spy.mockClear();
    const value = signSession('write-token', KEYS['write-token'], NOW + 60);
    const tampered = value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A');
    expect(verifySession(tampered, KEYS, NOW, DAY)).toBeUndefined();
    expect(spy).toHaveBeenCalledTimes(1);
  });

  test.prop([fc.constantFrom('read-token' as const, 'write-token' as const), fc.integer({ min: 1, max: DAY - 1 }), fc.nat(), fc.string({ minLength: 1, maxLength: 3 })], { numRuns: 300, seed: 33 })(
    'any edit of a valid session (a character replaced, inserted or removed) is refused',
    (credential, ttl, at, edit) => {
      const value = signSession(credential, KEYS[credential], NOW + ttl);
      const i = at % value.length;
      for (const forged of [value.slice(0, i) + edit + value.slice(i + 1), value.slice(0, i) + edit + value.slice(i), value.slice(0, i) + value.slice(i + 1)]) {
        if (forged !== value) expect(verifySession(forged, KEYS, NOW, DAY)).toBeUndefined();
      }
    },
  );

  test.prop([fc.string({ maxLength: 200 })], { numRuns: 300, seed: 33 })('an arbitrary string is no session', (value) => {
    expect(verifySession(value, KEYS, NOW, DAY)).toBeUndefined();
  });
});
