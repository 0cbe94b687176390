// The shapes of an install's NATS auth material (bundle.ts makes it, mint.ts and revoke.ts sign with it): the
// bundle of seeds and JWTs, and the keys of the auth Secret that holds it.
import { z } from 'zod';

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
