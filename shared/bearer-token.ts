// The HTTP API's bearer tokens (the write token, and the read token: shared/read-auth.ts), compared in constant
// time. Shared by the dispatcher's API and the operator console (console/server), which must refuse exactly what
// the API refuses.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of a presented bearer token with the configured one (hashes: equal lengths). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented || !expected) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header; undefined for any other header or none. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
}
