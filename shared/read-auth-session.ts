// The console's browser session (issue 33), stateless: several dispatcher replicas sit behind one Service and keep
// no session table. The cookie holds which token it was made with, its expiry, and an HMAC-SHA256 of both keyed by
// that token's current value: no replica needs to have seen the login, and rotating a token ends every session made
// with it (their MACs no longer verify). The cookie grants reads only; writes still need the bearer token.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SessionCredential = 'read-token' | 'write-token';
export type SessionKeys = Record<SessionCredential, string>;

const TAG: Record<SessionCredential, string> = { 'read-token': 'r', 'write-token': 'w' };
const CREDENTIAL_OF_TAG: Record<string, SessionCredential> = { r: 'read-token', w: 'write-token' };
/** `<r|w>.<expiry, unix seconds, no leading zero>.<HMAC, base64url>`: anything else (one value, one spelling) is not a session. */
const SHAPE = /^([rw])\.([1-9]\d{0,11})\.([A-Za-z0-9_-]{43})$/;

function mac(key: string, tag: string, expiresAt: number): string {
  // The purpose and version are in the MAC: a MAC made for anything else never verifies as a session.
  return createHmac('sha256', key).update(`tcab-console-session.v1.${tag}.${expiresAt}`).digest('base64url');
}

/** A session cookie value for `credential`, whose current value is `key`, valid until `expiresAt` (unix seconds). */
export function signSession(credential: SessionCredential, key: string, expiresAt: number): string {
  if (!key) throw new Error('a session needs a non-empty token to sign with');
  const tag = TAG[credential];
  return `${tag}.${expiresAt}.${mac(key, tag, expiresAt)}`;
}

/**
 * The session a cookie value proves, or undefined: malformed, made with a token that is not the current one (or
 * none is configured), expired, or expiring further out than `maxAgeSeconds` from now (a shortened lifetime
 * applies to sessions already out). The MAC is compared in constant time.
 */
export function verifySession(value: string, keys: SessionKeys, nowSeconds: number, maxAgeSeconds: number): { credential: SessionCredential; expiresAt: number } | undefined {
  const m = SHAPE.exec(value);
  if (!m) return undefined;
  const [, tag, expiry, presented] = m as unknown as [string, string, string, string];
  const credential = CREDENTIAL_OF_TAG[tag]!;
  const key = keys[credential];
  if (!key) return undefined;
  const expiresAt = Number(expiry);
  const expected = Buffer.from(mac(key, tag, expiresAt));
  if (!timingSafeEqual(Buffer.from(presented), expected)) return undefined;
  if (expiresAt <= nowSeconds || expiresAt > nowSeconds + maxAgeSeconds) return undefined;
  return { credential, expiresAt };
}
