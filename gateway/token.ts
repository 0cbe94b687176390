// Per-run gateway tokens (issue 34): `tcabgw_<base64url(JSON claims)>.<base64url(HMAC-SHA256(key, payload))>`.
// Stateless: whoever holds the signing key (the driver on a workstation, the dispatcher in a cluster) mints; the
// gateway verifies. The run and attempt a request is accounted to come from the signed claims only, so one run's
// token can never spend as another's. Pure: the clock is a parameter; revocation is the caller's set.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GatewayTokenClaims } from '../shared/gateway.ts';
import type { RunBudget } from '../shared/gateway.ts';
import { InvalidInputError } from '../shared/errors.ts';

export const TOKEN_PREFIX = 'tcabgw_';
/** Shortest signing key accepted (bytes): HMAC-SHA256's own block of entropy. */
export const MIN_SIGNING_KEY_BYTES = 32;
/** Longest token read at all: claims with a budget and 200-character ids stay well under it. */
export const MAX_TOKEN_CHARS = 2048;

const SIGNATURE_CHARS = 43; // 32 bytes, unpadded base64url
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Why a presented token was refused; never says more than that (no claim of a forged token is echoed). */
export type TokenRefusal = 'malformed' | 'bad_signature' | 'bad_claims' | 'expired' | 'lifetime_too_long' | 'revoked';

export type TokenCheck = { ok: true; claims: GatewayTokenClaims } | { ok: false; reason: TokenRefusal };

/** A fresh random signing key (32 bytes). */
export function newSigningKey(): Buffer {
  return randomBytes(MIN_SIGNING_KEY_BYTES);
}

/** Checks a signing key's length; the error names the field, never the key. */
export function signingKeyFrom(key: Uint8Array | string, field = 'signingKey'): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'base64') : Buffer.from(key);
  if (bytes.length < MIN_SIGNING_KEY_BYTES) throw new InvalidInputError(field, `must be at least ${MIN_SIGNING_KEY_BYTES} random bytes (got ${bytes.length})`);
  return bytes;
}

function sign(payload: string, key: Uint8Array): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

/** Mints a token for the claims (validated: a bad run id or expiry throws, naming the field). */
export function mintToken(claims: GatewayTokenClaims, key: Uint8Array): string {
  const parsed = GatewayTokenClaims.safeParse(claims);
  if (!parsed.success) throw new InvalidInputError('claims', parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '), { cause: parsed.error });
  const payload = Buffer.from(JSON.stringify(parsed.data)).toString('base64url');
  const token = `${TOKEN_PREFIX}${payload}.${sign(payload, key).toString('base64url')}`;
  if (token.length > MAX_TOKEN_CHARS) throw new InvalidInputError('claims', `make a token of ${token.length} characters, over ${MAX_TOKEN_CHARS}`);
  return token;
}

/** The claims a token for `run`/`attempt` living `ttlSeconds` from `nowMs` carries. */
export function claimsFor(run: string, attempt: string, ttlSeconds: number, nowMs: number, budget?: RunBudget): GatewayTokenClaims {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new InvalidInputError('ttlSeconds', `must be a positive whole number of seconds, got ${ttlSeconds}`);
  return { run, attempt, exp: Math.floor(nowMs / 1000) + ttlSeconds, ...(budget ? { budget } : {}) };
}

export interface VerifyOptions {
  key: Uint8Array;
  /** Now, in milliseconds since the epoch. */
  nowMs: number;
  /** Tokens whose expiry lies further ahead than this are refused (so a revocation can be forgotten after it). */
  maxLifetimeSeconds: number;
}

/**
 * Verifies a presented token: never throws, for any string. The signature is checked (constant-time) before the
 * payload is even decoded, so nothing of an unsigned payload is ever parsed.
 */
export function verifyToken(presented: string, options: VerifyOptions): TokenCheck {
  if (presented.length > MAX_TOKEN_CHARS || !presented.startsWith(TOKEN_PREFIX)) return { ok: false, reason: 'malformed' };
  const body = presented.slice(TOKEN_PREFIX.length);
  const dot = body.indexOf('.');
  if (dot <= 0 || dot !== body.lastIndexOf('.')) return { ok: false, reason: 'malformed' };
  const payload = body.slice(0, dot);
  const signature = body.slice(dot + 1);
  if (!BASE64URL.test(payload) || signature.length !== SIGNATURE_CHARS || !BASE64URL.test(signature)) return { ok: false, reason: 'malformed' };
  const given = Buffer.from(signature, 'base64url');
  // One signature per payload: a variant spelling of the same bytes (the last character's spare bits) is not it.
  if (given.length !== 32 || given.toString('base64url') !== signature) return { ok: false, reason: 'malformed' };
  if (!timingSafeEqual(given, sign(payload, options.key))) return { ok: false, reason: 'bad_signature' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad_claims' };
  }
  const claims = GatewayTokenClaims.safeParse(json);
  if (!claims.success) return { ok: false, reason: 'bad_claims' };
  const now = Math.floor(options.nowMs / 1000);
  if (claims.data.exp <= now) return { ok: false, reason: 'expired' };
  if (claims.data.exp > now + options.maxLifetimeSeconds) return { ok: false, reason: 'lifetime_too_long' };
  return { ok: true, claims: claims.data };
}

/** The key of a run attempt in maps and sets: unambiguous whatever the ids contain. */
export function attemptKey(run: string, attempt: string): string {
  return JSON.stringify([run, attempt]);
}

/**
 * Revoked run attempts. An entry is kept until every token of its attempt has expired (`until`, Unix ms: the
 * latest expiry minted, else now + the longest lifetime a token may have), then forgotten.
 */
export class RevocationList {
  readonly #until = new Map<string, number>();

  revoke(run: string, attempt: string, untilMs: number): void {
    const key = attemptKey(run, attempt);
    this.#until.set(key, Math.max(untilMs, this.#until.get(key) ?? 0));
  }

  has(run: string, attempt: string): boolean {
    return this.#until.has(attemptKey(run, attempt));
  }

  /** Forgets entries past their `until`; returns how many remain. */
  sweep(nowMs: number): number {
    for (const [key, until] of this.#until) if (until <= nowMs) this.#until.delete(key);
    return this.#until.size;
  }

  get size(): number {
    return this.#until.size;
  }
}

/** A token's check including revocation: what the server asks for each request. */
export function checkToken(presented: string, options: VerifyOptions & { revoked: Pick<RevocationList, 'has'> }): TokenCheck {
  const check = verifyToken(presented, options);
  if (check.ok && options.revoked.has(check.claims.run, check.claims.attempt)) return { ok: false, reason: 'revoked' };
  return check;
}

/**
 * checkToken with a bounded memory of tokens whose signature and claims were already verified: a run sends the
 * same token with every request, so HMAC, JSON and schema work is done once per token. Expiry, lifetime and
 * revocation are still checked on every call (they depend on the time and on the revocation list).
 */
export class VerifiedTokens {
  readonly #options: Omit<VerifyOptions, 'nowMs'> & { revoked: Pick<RevocationList, 'has'> };
  readonly #known = new Map<string, GatewayTokenClaims>();
  readonly #capacity: number;

  constructor(options: Omit<VerifyOptions, 'nowMs'> & { revoked: Pick<RevocationList, 'has'> }, capacity = 10_000) {
    this.#options = options;
    this.#capacity = capacity;
  }

  check(presented: string, nowMs: number): TokenCheck {
    const claims = this.#known.get(presented);
    if (claims === undefined) {
      const result = checkToken(presented, { ...this.#options, nowMs });
      if (result.ok) {
        if (this.#known.size >= this.#capacity) this.#known.delete(this.#known.keys().next().value!);
        this.#known.set(presented, result.claims);
      }
      return result;
    }
    const now = Math.floor(nowMs / 1000);
    if (claims.exp <= now) {
      this.#known.delete(presented);
      return { ok: false, reason: 'expired' };
    }
    if (claims.exp > now + this.#options.maxLifetimeSeconds) return { ok: false, reason: 'lifetime_too_long' };
    if (this.#options.revoked.has(claims.run, claims.attempt)) return { ok: false, reason: 'revoked' };
    return { ok: true, claims };
  }
}
