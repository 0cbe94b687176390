// The dispatcher's NATS identities when auth is on (TCAB_NATS_AUTH_SECRET): the install's keys from their Secret
// (auth-secret.ts), the dispatcher's own user (full rights in the TCAB account) and a system-account connection for
// revocations, both minted in memory at every start and never written anywhere. The settings' other credentials
// (TCAB_NATS_USER/PASSWORD/TOKEN/CREDS) are not used: in operator mode the server knows only users its keys signed.
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import { NatsAccountAdmin, mintDispatcherCredentials, revokeRunUser } from '../../nats/auth/index.ts';
import type { NatsAuthBundle } from '../../nats/auth/index.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import type { DispatcherConfig } from '../config.ts';
import { ensureNatsAuthSecret } from './auth-secret.ts';

/** What the dispatcher runs with when auth is on. */
export interface DispatcherNatsAuth {
  bundle: NatsAuthBundle;
  /** The connection settings for the dispatcher's own identity (the run stream, results, relayed events). */
  settings: NatsSettings;
  /** Revokes one run user now (through the system account); its entry lasts until `expiresAt` when given. */
  revoke: (publicKey: string, expiresAt?: Date) => Promise<void>;
  close: () => Promise<void>;
}

/** The servers and TLS of `base`, with the dispatcher's own user in place of any other credential. */
export async function dispatcherNatsSettings(base: NatsSettings, bundle: NatsAuthBundle): Promise<NatsSettings> {
  const { creds } = await mintDispatcherCredentials(bundle);
  return { servers: base.servers, ...(base.caFile ? { caFile: base.caFile } : {}), credsText: creds };
}

/** Ensures the auth Secret and connects the revocation side; the run stream connects with `settings` after. */
export async function startNatsAuth(core: CoreV1Api, config: Pick<DispatcherConfig, 'TCAB_NAMESPACE' | 'TCAB_NATS_AUTH_SECRET' | 'TCAB_SERVICE_ACCOUNT'>, base: NatsSettings, log: Logger): Promise<DispatcherNatsAuth> {
  const name = config.TCAB_NATS_AUTH_SECRET;
  if (!name) throw new Error('startNatsAuth without TCAB_NATS_AUTH_SECRET');
  const bundle = await ensureNatsAuthSecret(core, { namespace: config.TCAB_NAMESPACE, name, serviceAccount: config.TCAB_SERVICE_ACCOUNT }, log);
  const settings = await dispatcherNatsSettings(base, bundle);
  const admin = await NatsAccountAdmin.connect(settings, bundle, { waitOnFirstConnect: true });
  return { bundle, settings, revoke: (publicKey, expiresAt) => revokeRunUser(admin, publicKey, { expiresAt }), close: () => admin.close() };
}
