// The NATS auth API (issue 22): what the dispatcher, the chart tooling and `tcab nats auth` use.
//
//   generateNatsAuth({ resolverDir })     -> (async) the auth Secret's data: bundle.json, auth.conf, reader.creds (new keys)
//   parseNatsAuthBundle(text)             -> NatsAuthBundle (zod-checked) from bundle.json
//   renderAuthConf(bundle, resolverDir)   -> the nats-server include text (public material only)
//   mintRunCredentials(bundle, runId, expiresAt) -> { creds, publicKey, inboxPrefix, expiresAt } for one run's driver
//   mintReaderCredentials(bundle)         -> a read-only user (`tcab events`), long-lived unless given an expiry
//   mintDispatcherCredentials(bundle)     -> the dispatcher's own user (full rights in TCAB), in memory only
//   mintSystemCredentials(bundle)         -> a SYS user (account updates), in memory only
//   NatsAccountAdmin.connect(settings, bundle) + revokeRunUser(admin, publicKey, { expiresAt }) -> revoke a run user
//                                            now; give its expiry (RunCredentials.expiresAt, credentialsClaims): the
//                                            entry then leaves the account JWT at that time, else after 7 days (~95
//                                            bytes each; the JWT must fit the server's max payload, ~10,000 entries)
//   credentialsClaims(creds)              -> { publicKey, expiresAt } of a .creds text (one read back from a Secret)
//   runInboxPrefix(runId)                 -> `_INBOX_<run>`: the driver's TCAB_NATS_INBOX_PREFIX
//   READER_INBOX_PREFIX                   -> the reader's inbox prefix (its only reply subjects); nats/reader.ts uses it
//                                            unless TCAB_NATS_INBOX_PREFIX says otherwise
// Connect with a creds text through NatsSettings.credsText (nats/settings.ts).
export { NatsAuthBundle, NatsAuthSecretData } from './bundle-schema.ts';
export { DEFAULT_RESOLVER_DIR, generateNatsAuth, parseNatsAuthBundle, renderAuthConf } from './bundle.ts';
export { MAX_RUN_CREDENTIAL_LIFETIME_MS, credentialsClaims, credentialsPublicKey, mintDispatcherCredentials, mintReaderCredentials, mintRunCredentials, mintSystemCredentials } from './mint.ts';
export type { MintedCredentials, RunCredentials } from './mint.ts';
export { READER_INBOX_PREFIX, runInboxPrefix } from './permissions.ts';
export { NatsAccountAdmin, revokeRunUser } from './revoke.ts';
export type { RevokeOptions } from './revoke.ts';
