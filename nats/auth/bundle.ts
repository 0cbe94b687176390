// An install's NATS auth material (decentralized JWT auth, "operator mode"): one operator, one account TCAB that
// holds the run stream (JetStream enabled), and the system account SYS (the dispatcher pushes account updates,
// i.e. revocations, through it). Generated once (by the dispatcher into a Kubernetes Secret, or by
// `tcab nats auth init` for an operator's own NATS) and never regenerated: every credential minted later is signed
// by the TCAB account key kept here, and the server trusts only this operator.
//
// Three texts, the keys of the Secret: `bundle.json` (seeds + JWTs, the dispatcher's only), `auth.conf` (the server's
// include file: public JWTs only, no seed) and `reader.creds` (a long-lived read-only user, for `tcab events`).
import { z } from 'zod';
import { createAccount, createOperator, encodeAccount, encodeOperator } from '@nats-io/jwt';
import { keyPair } from './keys.ts';
import { mintReaderCredentials } from './mint.ts';

/** An NKey seed of one kind: 'S' + the kind's prefix letter ('O' operator, 'A' account, 'U' user) + 56 base32. */
const seedOf = (kind: 'O' | 'A') => z.string().regex(new RegExp(`^S${kind}[A-Z2-7]{56}$`), `an NKey seed of kind ${kind}`);
/** A compact JWS: header.claims.signature, base64url. Its signature is checked by nats-server, not here. */
const Jwt = z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a JWT');

const KeyAndJwt = <K extends 'O' | 'A'>(kind: K) => z.strictObject({ seed: seedOf(kind), jwt: Jwt });

export const NatsAuthBundle = z.strictObject({
  version: z.literal(1),
  operator: KeyAndJwt('O'),
  /** The account TCAB: the run stream lives here; every user (run, reader, dispatcher) is signed by its seed. */
  account: KeyAndJwt('A'),
  /** The system account SYS: its users may send account-JWT updates to the servers. */
  systemAccount: KeyAndJwt('A'),
});
export type NatsAuthBundle = z.infer<typeof NatsAuthBundle>;

/** The keys of the auth Secret (and the files `tcab nats auth init` writes). */
export const NatsAuthSecretData = z.strictObject({
  'bundle.json': z.string().min(1),
  'auth.conf': z.string().min(1),
  'reader.creds': z.string().min(1),
});
export type NatsAuthSecretData = z.infer<typeof NatsAuthSecretData>;

export const ACCOUNT_NAME = 'TCAB';
export const SYSTEM_ACCOUNT_NAME = 'SYS';
/** Where the chart's NATS keeps the resolver's account JWTs (on its JetStream volume, so revocations persist). */
export const DEFAULT_RESOLVER_DIR = '/data/jwt';

const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 } as const;
/** JetStream is enabled for an account by giving it storage limits; -1 = bounded only by the server's own limits. */
const JETSTREAM_UNLIMITED = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1, max_ack_pending: -1, mem_max_stream_bytes: -1, disk_max_stream_bytes: -1, max_bytes_required: false } as const;

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

export function publicKeyOf(seed: string): string {
  return keyPair(seed).getPublicKey();
}

/** The TCAB account JWT with the given revocations (user public key -> unix seconds), signed by the operator. */
export function encodeTcabAccount(bundle: Pick<NatsAuthBundle, 'operator' | 'account'>, revocations: Record<string, number> = {}): Promise<string> {
  const account = { limits: { ...UNLIMITED, ...JETSTREAM_UNLIMITED }, ...(Object.keys(revocations).length ? { revocations } : {}) };
  return encodeAccount(ACCOUNT_NAME, keyPair(bundle.account.seed), account, { signer: keyPair(bundle.operator.seed) });
}

/** Fresh keys and the JWTs that tie them together. Random, so not pure; everything after it is. */
export async function generateBundle(): Promise<NatsAuthBundle> {
  // Random seeds from nkeys; everything signed with them goes through the native key pairs (keys.ts).
  const operator = keyPair(text(createOperator().getSeed()));
  const account = keyPair(text(createAccount().getSeed()));
  const system = keyPair(text(createAccount().getSeed()));
  const seeds = { operator: text(operator.getSeed()), account: text(account.getSeed()), system: text(system.getSeed()) };
  const operatorJwt = await encodeOperator('tcab', operator, { system_account: system.getPublicKey() });
  const systemJwt = await encodeAccount(SYSTEM_ACCOUNT_NAME, system, { limits: UNLIMITED }, { signer: operator });
  const partial = { operator: { seed: seeds.operator, jwt: operatorJwt }, account: { seed: seeds.account, jwt: '' } };
  const accountJwt = await encodeTcabAccount(partial);
  return NatsAuthBundle.parse({ version: 1, ...partial, account: { seed: seeds.account, jwt: accountJwt }, systemAccount: { seed: seeds.system, jwt: systemJwt } });
}

/**
 * The nats-server include text for a bundle: trust this operator, SYS is the system account, and a `full` resolver
 * (it stores account JWTs in `resolverDir` and accepts updates signed by the operator: that is how a revocation
 * reaches the servers) preloaded with both accounts. Public material only. A JWT stored in the resolver dir that
 * is newer than the preloaded one wins, so a restart keeps the revocations pushed since.
 */
export function renderAuthConf(bundle: NatsAuthBundle, resolverDir = DEFAULT_RESOLVER_DIR): string {
  const tcab = publicKeyOf(bundle.account.seed);
  const sys = publicKeyOf(bundle.systemAccount.seed);
  return [
    '# NATS decentralized auth for tcab (generated by nats/auth; public keys and JWTs only, no seeds).',
    `operator: ${bundle.operator.jwt}`,
    `system_account: ${sys}`,
    'resolver: {',
    '  type: full',
    `  dir: ${JSON.stringify(resolverDir)}`,
    '  allow_delete: false',
    '}',
    'resolver_preload: {',
    `  ${tcab}: ${bundle.account.jwt}`,
    `  ${sys}: ${bundle.systemAccount.jwt}`,
    '}',
    '',
  ].join('\n');
}

/** The Secret's data for a new install: `bundle.json`, `auth.conf`, `reader.creds`. */
export async function generateNatsAuth(options: { resolverDir?: string } = {}): Promise<NatsAuthSecretData> {
  const bundle = await generateBundle();
  const reader = await mintReaderCredentials(bundle);
  return { 'bundle.json': `${JSON.stringify(bundle, null, 2)}\n`, 'auth.conf': renderAuthConf(bundle, options.resolverDir), 'reader.creds': reader.creds };
}

/** bundle.json text back to the bundle; throws a zod error naming the bad field (never echoing a seed). */
export function parseNatsAuthBundle(json: string): NatsAuthBundle {
  return NatsAuthBundle.parse(JSON.parse(json));
}
