// Minting user credentials (a user JWT signed by an account key, plus the user's own NKey seed, in the `.creds`
// text format nats.js and the nats CLI read). A new user key per credential, so one can be revoked alone.
import { decode, encodeUser, fmtCreds } from '@nats-io/jwt';
import type { NatsAuthBundle } from './bundle-schema.ts';
import { createUserKeyPair, keyPair } from './keys.ts';
import { dispatcherPermissions, readerPermissions, runInboxPrefix, runUserPermissions } from './permissions.ts';
import type { UserPermissions } from './permissions.ts';

export interface MintedCredentials {
  /** The `.creds` text (JWT + seed): a secret; goes only into a Secret, a 0600 file or memory. */
  creds: string;
  /** The user's public key (U...): what a revocation names. */
  publicKey: string;
}

export interface RunCredentials extends MintedCredentials {
  /** The nats.js inboxPrefix the run's driver must use (TCAB_NATS_INBOX_PREFIX): its only replies subject. */
  inboxPrefix: string;
  /** When it expires (the JWT's exp, whole seconds): pass it to revokeRunUser. */
  expiresAt: Date;
}

/**
 * The longest a run credential may live. A revocation whose credential's expiry is unknown is kept this long
 * (revoke.ts): by then the credential has expired, and the entry leaves the account JWT.
 */
export const MAX_RUN_CREDENTIAL_LIFETIME_MS = 7 * 24 * 3600_000;

/** A user of the account whose seed is given, with exactly these permissions (the identities below; tests). */
export async function mintUser(accountSeed: string, name: string, permissions: UserPermissions, expiresAt?: Date): Promise<MintedCredentials> {
  const user = createUserKeyPair();
  const exp = expiresAt ? { exp: Math.floor(expiresAt.getTime() / 1000) } : {};
  const jwt = await encodeUser(name, user, keyPair(accountSeed), permissions, exp);
  return { creds: new TextDecoder().decode(fmtCreds(jwt, user)), publicKey: user.getPublicKey() };
}

/**
 * One run's driver credential: may publish only that run's subjects, expires at `expiresAt` (the Run's deadline
 * plus a margin; at most MAX_RUN_CREDENTIAL_LIFETIME_MS away).
 */
export async function mintRunCredentials(bundle: NatsAuthBundle, runId: string, expiresAt: Date, now = new Date()): Promise<RunCredentials> {
  const lifetime = expiresAt.getTime() - now.getTime();
  if (!(lifetime > 0 && lifetime <= MAX_RUN_CREDENTIAL_LIFETIME_MS)) {
    throw new RangeError(`a run credential must expire within ${MAX_RUN_CREDENTIAL_LIFETIME_MS / 3600_000} h from now (got ${expiresAt.toISOString()})`);
  }
  const minted = await mintUser(bundle.account.seed, `run-${runId}`, runUserPermissions(runId), expiresAt);
  return { ...minted, inboxPrefix: runInboxPrefix(runId), expiresAt: new Date(Math.floor(expiresAt.getTime() / 1000) * 1000) };
}

/** A read-only credential (`tcab events`, console, exporters); long-lived unless `expiresAt` is given. */
export function mintReaderCredentials(bundle: Pick<NatsAuthBundle, 'account'>, expiresAt?: Date): Promise<MintedCredentials> {
  return mintUser(bundle.account.seed, 'reader', readerPermissions(), expiresAt);
}

/** The dispatcher's own credential: full rights in TCAB. Minted in memory at startup, never written anywhere. */
export function mintDispatcherCredentials(bundle: NatsAuthBundle): Promise<MintedCredentials> {
  return mintUser(bundle.account.seed, 'dispatcher', dispatcherPermissions());
}

/** A SYS account user (dispatcher only, in memory): sends account-JWT updates, i.e. revocations (revoke.ts). */
export function mintSystemCredentials(bundle: NatsAuthBundle): Promise<MintedCredentials> {
  return mintUser(bundle.systemAccount.seed, 'dispatcher-system', dispatcherPermissions());
}

/** The user public key and expiry of a `.creds` text (to revoke a credential read back from its Secret). */
export function credentialsClaims(creds: string): { publicKey: string; expiresAt?: Date } {
  const jwt = /-----BEGIN NATS USER JWT-----\s*([^\s-][^\s]*)\s*------END NATS USER JWT------/.exec(creds)?.[1];
  if (!jwt) throw new Error('not a NATS .creds text (no user JWT)');
  const claims = decode(jwt);
  return { publicKey: claims.sub, ...(claims.exp ? { expiresAt: new Date(claims.exp * 1000) } : {}) };
}

/** The user public key of a `.creds` text. */
export function credentialsPublicKey(creds: string): string {
  return credentialsClaims(creds).publicKey;
}
