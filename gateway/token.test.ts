import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkToken, claimsFor, MAX_TOKEN_CHARS, mintToken, RevocationList, signingKeyFrom, TOKEN_PREFIX, VerifiedTokens, verifyToken } from './token.ts';
import type { TokenRefusal } from './token.ts';

const KEY = Buffer.alloc(32, 0x11);
const NOW = Date.parse('2026-12-06T10:00:00Z');
const NOW_S = NOW / 1000;
const opts = { key: KEY, nowMs: NOW, maxLifetimeSeconds: 86_400 };
const claims = { run: 'tcab_fix-tests', attempt: '6f1c2a3e-uid', exp: NOW_S + 600 };

const b64 = (s: string) => Buffer.from(s).toString('base64url');
function resign(payloadJson: string, key = KEY): string {
  // A token built by hand, to hold payloads mintToken would refuse.
  const payload = b64(payloadJson);
  const { createHmac } = process.getBuiltinModule('node:crypto');
  return `${TOKEN_PREFIX}${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
}

describe('gateway tokens', () => {
  it('round-trips claims, budget included', () => {
    const withBudget = { ...claims, budget: { maxTokens: { total: 1000 }, maxCostUsd: 2 } };
    const token = mintToken(withBudget, KEY);
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(verifyToken(token, opts)).toEqual({ ok: true, claims: withBudget });
  });

  const valid = mintToken(claims, KEY);
  const [payload, signature] = valid.slice(TOKEN_PREFIX.length).split('.') as [string, string];
  const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  // 43 characters carry 258 bits for 32 bytes: the last character's two low bits are spare.
  const spareBit = (c: string) => B64URL[B64URL.indexOf(c) ^ 1]!;
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  it.each<[string, string, TokenRefusal, Partial<typeof opts>?]>([
    ['empty', '', 'malformed'],
    ['no prefix', valid.slice(TOKEN_PREFIX.length), 'malformed'],
    ['another prefix', `sk-ant-${valid.slice(TOKEN_PREFIX.length)}`, 'malformed'],
    ['no signature', `${TOKEN_PREFIX}${payload}`, 'malformed'],
    ['empty payload', `${TOKEN_PREFIX}.${signature}`, 'malformed'],
    ['two dots', `${valid}.x`, 'malformed'],
    ['short signature', valid.slice(0, -1), 'malformed'],
    ['padded signature', `${valid}=`, 'malformed'],
    ['the same signature bytes spelled with a spare bit set', `${TOKEN_PREFIX}${payload}.${signature.slice(0, -1)}${spareBit(signature.at(-1)!)}`, 'malformed'],
    ['a character outside base64url', `${TOKEN_PREFIX}${payload}+.${signature}`, 'malformed'],
    ['too long', `${TOKEN_PREFIX}${'A'.repeat(MAX_TOKEN_CHARS)}.${signature}`, 'malformed'],
    ['a flipped signature byte', `${TOKEN_PREFIX}${payload}.${flip(signature, 5)}`, 'bad_signature'],
    ['a flipped payload byte', `${TOKEN_PREFIX}${flip(payload, 3)}.${signature}`, 'bad_signature'],
    ['another key', mintToken(claims, Buffer.alloc(32, 0x22)), 'bad_signature'],
    ['a signed payload that is not JSON', resign('{not json'), 'bad_claims'],
    ['a signed payload with an extra claim', resign(JSON.stringify({ ...claims, admin: true })), 'bad_claims'],
    ['a signed payload without a run', resign(JSON.stringify({ attempt: 'a', exp: NOW_S + 60 })), 'bad_claims'],
    ['a signed payload with a fractional expiry', resign(JSON.stringify({ ...claims, exp: NOW_S + 0.5 })), 'bad_claims'],
    ['expired a second ago', mintToken({ ...claims, exp: NOW_S - 1 }, KEY), 'expired'],
    ['expiring now', mintToken({ ...claims, exp: NOW_S }, KEY), 'expired'],
    ['valid for longer than the gateway allows', mintToken({ ...claims, exp: NOW_S + 86_401 }, KEY), 'lifetime_too_long'],
  ])('refuses %s', (_name, token, reason, over) => {
    expect(verifyToken(token, { ...opts, ...over })).toEqual({ ok: false, reason });
  });

  it('revocation refuses every token of the attempt, and only of that attempt', () => {
    const revoked = new RevocationList();
    const other = mintToken({ ...claims, attempt: 'another-uid' }, KEY);
    revoked.revoke(claims.run, claims.attempt, NOW + 600_000);
    expect(checkToken(valid, { ...opts, revoked })).toEqual({ ok: false, reason: 'revoked' });
    expect(checkToken(other, { ...opts, revoked }).ok).toBe(true);
    // Ids that would collide if joined with a separator stay apart.
    revoked.revoke('a:b', 'c', NOW + 1);
    expect(revoked.has('a', 'b:c')).toBe(false);
    expect(revoked.sweep(NOW + 1)).toBe(1);
    expect(revoked.sweep(NOW + 600_000)).toBe(0);
  });

  it('a remembered token is still checked for expiry, lifetime and revocation at each use', () => {
    const revoked = new RevocationList();
    const verified = new VerifiedTokens({ key: KEY, maxLifetimeSeconds: 86_400, revoked }, 2);
    expect(verified.check(valid, NOW)).toEqual({ ok: true, claims });
    expect(verified.check(valid, NOW)).toEqual({ ok: true, claims }); // from memory
    expect(verified.check(valid, NOW - 86_400_000)).toEqual({ ok: false, reason: 'lifetime_too_long' });
    expect(verified.check(`${valid}x`, NOW)).toEqual({ ok: false, reason: 'malformed' }); // not remembered: verified
    revoked.revoke(claims.run, claims.attempt, NOW + 1e9);
    expect(verified.check(valid, NOW)).toEqual({ ok: false, reason: 'revoked' });
    expect(verified.check(valid, (claims.exp + 1) * 1000)).toEqual({ ok: false, reason: 'expired' });
    // Bounded: older tokens are forgotten (and verified again when they come back).
    const others = ['x', 'y', 'z'].map((attempt) => mintToken({ ...claims, attempt }, KEY));
    for (const t of others) expect(verified.check(t, NOW).ok).toBe(true);
    expect(verified.check(others[0]!, NOW).ok).toBe(true);
  });

  it('mint refuses bad claims, naming the field; keys must be 32 bytes', () => {
    expect(() => mintToken({ ...claims, run: '' }, KEY)).toThrow(/claims: run/);
    expect(() => claimsFor('r', 'a', 0, NOW)).toThrow(/ttlSeconds/);
    expect(claimsFor('r', 'a', 60, NOW + 999)).toEqual({ run: 'r', attempt: 'a', exp: NOW_S + 60 });
    expect(() => signingKeyFrom(Buffer.alloc(31))).toThrow(/at least 32/);
    expect(signingKeyFrom(Buffer.alloc(32, 1).toString('base64')).length).toBe(32);
  });

  it('property: arbitrary strings never verify and never throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string().map((s) => TOKEN_PREFIX + s), fc.tuple(fc.base64String(), fc.base64String()).map(([a, b]) => `${TOKEN_PREFIX}${a}.${b}`.replace(/[+/=]/g, '_'))), (s) => {
        const result = verifyToken(s, opts);
        expect(result.ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: any change to a valid token is refused (one character substituted, inserted or removed)', () => {
    const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ');
    fc.assert(
      fc.property(fc.nat({ max: valid.length - 1 }), alphabet, fc.constantFrom('substitute', 'insert', 'remove'), (i, ch, op) => {
        const changed = op === 'substitute' ? valid.slice(0, i) + ch + valid.slice(i + 1) : op === 'insert' ? valid.slice(0, i) + ch + valid.slice(i) : valid.slice(0, i) + valid.slice(i + 1);
        if (changed === valid) return;
        expect(verifyToken(changed, opts).ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: whatever claims are minted verify to themselves, run and attempt untouched', () => {
    const id = fc.string({ minLength: 1, maxLength: 200 });
    fc.assert(
      fc.property(id, id, fc.integer({ min: 1, max: 86_400 }), (run, attempt, ttl) => {
        const c = { run, attempt, exp: NOW_S + ttl };
        expect(verifyToken(mintToken(c, KEY), opts)).toEqual({ ok: true, claims: c });
      }),
      { numRuns: 500 },
    );
  });
});
