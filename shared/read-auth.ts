// Who may read (issue 33): the console's streams, its ATIF download and GET /harness-config return every Run's spec
// (prompt included), its events and its result, so on a shared cluster a run's agent could read another run's work.
// Every data read needs a credential: the read token (or the write token, which grants reads too) as a bearer, a
// session cookie made from one (browsers: EventSource cannot send a header), or, in `proxy` mode, a user asserted
// by a proxy whose address is trusted. `open` reads without any, only when set as that explicit value. Pure: the
// tokens, the peer's trust and the clock are passed in.
import { isIP } from 'node:net';
import { z } from 'zod';
import { bearerOf, tokenMatches } from './bearer-token.ts';
import { verifySession } from './read-auth-session.ts';
import type { SessionCredential } from './read-auth-session.ts';

export const READ_AUTH_MODES = ['token', 'proxy', 'open'] as const;
export const ReadAuthMode = z.enum(READ_AUTH_MODES);
export type ReadAuthMode = z.infer<typeof ReadAuthMode>;

/** oauth2-proxy's header for the signed-in user (its `--set-xauthrequest`, read by ingress-nginx's auth-url). */
export const DEFAULT_PROXY_USER_HEADER = 'X-Auth-Request-User';
/** How long a browser session lasts unless configured (the chart's console.auth.sessionMaxAgeSeconds). */
export const DEFAULT_SESSION_MAX_AGE_SECONDS = 12 * 3600;
export const SESSION_COOKIE = 'tcab_console_session';

/** A CIDR block (`10.0.0.0/8`, `fd00::/8`, or one address as `/32` / `/128`). */
export function isCidr(value: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  if (!m) return false;
  const family = isIP(m[1]!);
  return family !== 0 && Number(m[2]) <= (family === 4 ? 32 : 128);
}
export const Cidr = z.string().refine(isCidr, 'must be a CIDR block such as 10.0.0.0/8 or fd00::/8');

/** A header name as HTTP allows it (RFC 9110 token). */
export const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

/** POST /api/console/session: a browser logs in with the read token (or the write token). */
export const LoginRequest = z.strictObject({ token: z.string().min(1).max(4096) });

/** Which token a bearer or a session was made with: the write token also grants reads. */
export const CREDENTIALS = ['read-token', 'write-token'] as const;

/** GET, POST and DELETE /api/console/session answer this (POST: 401 with `{error}` for a wrong token). */
export const SessionState = z.strictObject({
  mode: ReadAuthMode,
  authenticated: z.boolean(),
  via: z.enum(['open', 'bearer', 'session', 'proxy']).optional(),
  credential: z.enum(CREDENTIALS).optional(),
  /** The user the trusted proxy asserted (proxy mode). */
  user: z.string().optional(),
  /** When the session cookie stops being accepted. */
  expiresAt: z.string().describe('RFC 3339 time').optional(),
});
export type SessionState = z.infer<typeof SessionState>;

export type ReadGrant =
  | { via: 'open' }
  | { via: 'bearer'; credential: SessionCredential }
  | { via: 'session'; credential: SessionCredential; expiresAt: number }
  | { via: 'proxy'; user: string };

export interface ReadPolicy {
  mode: ReadAuthMode;
  /** The current tokens ('' = none configured: it matches nothing). */
  readToken: string;
  writeToken: string;
  /** Seconds since the epoch. */
  nowSeconds: number;
  sessionMaxAgeSeconds: number;
}

export interface ReadRequest {
  authorization?: string | undefined;
  sessionCookie?: string | undefined;
  /** The proxy user header's value, read only from a peer inside the trusted CIDRs (else undefined). */
  trustedProxyUser?: string | undefined;
}

/** Which token this is, compared in constant time with both (both always compared). */
export function credentialOf(presented: string | undefined, readToken: string, writeToken: string): SessionCredential | undefined {
  const isWrite = tokenMatches(presented, writeToken);
  const isRead = tokenMatches(presented, readToken);
  return isWrite ? 'write-token' : isRead ? 'read-token' : undefined;
}

/** A proxy-asserted user worth believing: present, one printable line, of a sane length. */
function proxyUser(value: string | undefined): string | undefined {
  const user = value?.trim();
  // Printable: no control character (C0, DEL), which a log line or a page could be made to misread.
  return user && user.length <= 256 && [...user].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f) ? user : undefined;
}

/**
 * The grant of a read, or undefined (401). A bearer header, when sent, decides alone: a wrong one is refused even
 * with a valid cookie (a client that sends a token means that token).
 */
export function authoriseRead(request: ReadRequest, policy: ReadPolicy): ReadGrant | undefined {
  if (policy.mode === 'open') return { via: 'open' };
  if (request.authorization !== undefined) {
    const credential = credentialOf(bearerOf(request.authorization), policy.readToken, policy.writeToken);
    return credential ? { via: 'bearer', credential } : undefined;
  }
  if (policy.mode === 'proxy') {
    const user = proxyUser(request.trustedProxyUser);
    if (user) return { via: 'proxy', user };
  }
  if (request.sessionCookie) {
    const session = verifySession(request.sessionCookie, { 'read-token': policy.readToken, 'write-token': policy.writeToken }, policy.nowSeconds, policy.sessionMaxAgeSeconds);
    if (session) return { via: 'session', ...session };
  }
  return undefined;
}

/**
 * Whether the request reached us over https: TLS here, or `X-Forwarded-Proto: https` from a trusted proxy (the
 * first value: the proxy nearest the client wrote it). From any other peer the header is ignored.
 */
export function cameOverHttps(encrypted: boolean, peerTrusted: boolean, forwardedProto: string | string[] | undefined): boolean {
  if (encrypted) return true;
  if (!peerTrusted || forwardedProto === undefined) return false;
  const first = (Array.isArray(forwardedProto) ? forwardedProto[0] : forwardedProto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}
