// Revoking a user: the TCAB account JWT lists revoked user keys (key -> "credentials issued up to this second are
// void"); a new account JWT, signed by the operator, is pushed to the servers through the system account
// ($SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE). The servers disconnect the user at once and refuse it from then on;
// the `full` resolver stores the JWT, so a restarted server still refuses it.
//
// The current JWT is read back from the servers first (CLAIMS.LOOKUP), never taken from the bundle: the bundle's
// is the install's first, and pushing it with one more entry would un-revoke every earlier one.
import type { NatsConnection } from '@nats-io/transport-node';
import { decode } from '@nats-io/jwt';
import type { Account } from '@nats-io/jwt';
import { connectNats } from '../settings.ts';
import type { NatsSettings } from '../settings.ts';
import type { NatsAuthBundle } from './bundle-schema.ts';
import { encodeTcabAccount, publicKeyOf } from './bundle.ts';
import { MAX_RUN_CREDENTIAL_LIFETIME_MS, mintSystemCredentials } from './mint.ts';

const REQUEST_TIMEOUT_MS = 5000;

/** One credential to revoke: its user's key and, when known, its expiry (the JWT's exp). */
export interface Revocation {
  publicKey: string;
  expiresAt?: Date;
}

/**
 * The revocations after revoking `revoked`. An entry means "this user's credentials issued up to <time> are void";
 * a run user's key is used for one credential only, so the entry is dated at that credential's expiry (or, unknown,
 * the latest it can be: now + MAX_RUN_CREDENTIAL_LIFETIME_MS, as mint.ts caps it), and an entry whose date has
 * passed names an expired credential: it is dropped. So the account JWT holds only the revocations still doing
 * something, however many runs there were (each entry is ~95 bytes of a JWT that must fit the server's max
 * payload). Pure.
 */
export function nextRevocations(current: Readonly<Record<string, number>>, revoked: readonly Revocation[], now: Date): Record<string, number> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const latest = nowSeconds + Math.ceil(MAX_RUN_CREDENTIAL_LIFETIME_MS / 1000);
  const until = (expiresAt?: Date) => (expiresAt ? Math.min(latest, Math.max(nowSeconds, Math.ceil(expiresAt.getTime() / 1000))) : latest);
  const kept = Object.entries(current).filter(([, at]) => at >= nowSeconds);
  return { ...Object.fromEntries(kept), ...Object.fromEntries(revoked.map((r) => [r.publicKey, until(r.expiresAt)])) };
}

export interface RevokeOptions {
  /** The credential's expiry (its JWT's exp), when known: the entry is dropped once it passes. */
  expiresAt?: Date;
}

/**
 * The dispatcher's connection to the system account: pushes TCAB account updates (revocations). One update at a
 * time (each reads the current JWT, adds to it, pushes it: two at once would lose one); revocations asked for while
 * one is under way go together in the next, so a burst of finished Runs costs a few round trips, not one each.
 */
export class NatsAccountAdmin {
  private readonly nc: NatsConnection;
  private readonly bundle: NatsAuthBundle;
  private readonly accountKey: string;
  private pending: Array<{ revocation: Revocation; done: PromiseWithResolvers<void> }> = [];
  private updating = false;

  private constructor(nc: NatsConnection, bundle: NatsAuthBundle) {
    this.nc = nc;
    this.bundle = bundle;
    this.accountKey = publicKeyOf(bundle.account.seed);
  }

  /** Connects as a SYS user minted in memory from the bundle (the settings' own credentials are not used). */
  static async connect(settings: NatsSettings, bundle: NatsAuthBundle, options: { waitOnFirstConnect?: boolean } = {}): Promise<NatsAccountAdmin> {
    const { creds } = await mintSystemCredentials(bundle);
    const system: NatsSettings = { servers: settings.servers, caFile: settings.caFile, credsText: creds };
    return new NatsAccountAdmin(await connectNats(system, { name: 'tcab-dispatcher-system', ...options }), bundle);
  }

  /**
   * Revokes a run user's credential (only for credentials whose life mint.ts capped: a run's); resolves once the
   * servers took the new account JWT, by which time they have disconnected it.
   */
  revoke(publicKey: string, options: RevokeOptions = {}): Promise<void> {
    const done = Promise.withResolvers<void>();
    this.pending.push({ revocation: { publicKey, expiresAt: options.expiresAt }, done });
    if (!this.updating) void this.drain();
    return done.promise;
  }

  private async drain(): Promise<void> {
    this.updating = true;
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.update(batch.map((b) => b.revocation));
        for (const b of batch) b.done.resolve();
      } catch (error) {
        for (const b of batch) b.done.reject(error);
      }
    }
    this.updating = false;
  }

  private async update(revoked: Revocation[]): Promise<void> {
    const claims = `$SYS.REQ.ACCOUNT.${this.accountKey}.CLAIMS`;
    const current = await this.nc.request(`${claims}.LOOKUP`, '', { timeout: REQUEST_TIMEOUT_MS });
    const revocations = decode<Account>(current.string()).nats.revocations ?? {};
    const next = nextRevocations(revocations, revoked, new Date());
    const jwt = await encodeTcabAccount(this.bundle, next);
    const maxPayload = this.nc.info?.max_payload ?? Infinity;
    if (jwt.length > maxPayload) {
      throw new Error(`the TCAB account JWT with ${Object.keys(next).length} revocations is ${jwt.length} bytes, over the server's max payload (${maxPayload}): revoke with the credentials' expiry so entries leave sooner`);
    }
    const reply = await this.nc.request(`${claims}.UPDATE`, jwt, { timeout: REQUEST_TIMEOUT_MS });
    const answer = reply.json<{ error?: { description?: string } }>();
    if (answer.error) throw new Error(`the NATS server refused the account update: ${answer.error.description ?? 'no reason given'}`);
  }

  async close(): Promise<void> {
    await this.nc.close().catch(() => undefined);
  }
}

/** Revokes one run's user (by its public key, as minted or read back with credentialsClaims). */
export function revokeRunUser(admin: NatsAccountAdmin, userPublicKey: string, options?: RevokeOptions): Promise<void> {
  return admin.revoke(userPublicKey, options);
}
