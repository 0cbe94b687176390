// The auth material as data: a generated bundle passes its schema and ties its JWTs to its keys; auth.conf names
// the operator, the system account and both accounts and holds no seed; minted credentials carry the claims the
// server enforces (permissions, expiry). The server's side is in run-user.test.ts and revoke.test.ts.
import { decode } from '@nats-io/jwt';
import type { Account, Operator, User } from '@nats-io/jwt';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateBundle, generateNatsAuth, parseNatsAuthBundle, publicKeyOf, renderAuthConf } from './bundle.ts';
import { NatsAuthBundle } from './bundle-schema.ts';
import { MAX_RUN_CREDENTIAL_LIFETIME_MS, credentialsClaims, credentialsPublicKey, mintReaderCredentials, mintRunCredentials } from './mint.ts';
import { readerPermissions, runUserPermissions } from './permissions.ts';

let bundle: NatsAuthBundle;
beforeAll(async () => {
  bundle = await generateBundle();
});

const seedsOf = (b: NatsAuthBundle) => [b.operator.seed, b.account.seed, b.systemAccount.seed];
const userJwt = (creds: string) => /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)![1]!;

describe('generateBundle', () => {
  it('ties the operator, TCAB (JetStream enabled) and SYS together', () => {
    const operator = decode<Operator>(bundle.operator.jwt);
    const account = decode<Account>(bundle.account.jwt);
    const system = decode<Account>(bundle.systemAccount.jwt);
    expect(operator.sub).toBe(publicKeyOf(bundle.operator.seed));
    expect(operator.nats.system_account).toBe(publicKeyOf(bundle.systemAccount.seed));
    expect(account).toMatchObject({ name: 'TCAB', sub: publicKeyOf(bundle.account.seed), iss: operator.sub });
    expect(account.nats.limits).toMatchObject({ disk_storage: -1, mem_storage: -1, streams: -1, consumer: -1, conn: -1 });
    expect(system).toMatchObject({ name: 'SYS', iss: operator.sub });
    expect(system.nats.limits?.disk_storage).toBeUndefined();
  });

  it('makes new keys each time', async () => {
    const other = await generateBundle();
    for (const [i, seed] of seedsOf(other).entries()) expect(seed).not.toBe(seedsOf(bundle)[i]);
  });
});

describe('NatsAuthBundle', () => {
  it('round-trips through bundle.json and refuses a seed of the wrong kind', () => {
    expect(parseNatsAuthBundle(JSON.stringify(bundle))).toEqual(bundle);
    const swapped = { ...bundle, operator: { ...bundle.operator, seed: bundle.account.seed } };
    expect(NatsAuthBundle.safeParse(swapped).success).toBe(false);
    expect(NatsAuthBundle.safeParse({ ...bundle, extra: 1 }).success).toBe(false);
  });

  it('does not echo a seed in its errors', () => {
    const bad = { ...bundle, account: { ...bundle.account, seed: `${bundle.account.seed}X` } };
    const result = NatsAuthBundle.safeParse(bad);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error)).not.toContain(bundle.account.seed);
  });
});

describe('renderAuthConf', () => {
  it('trusts the operator, names SYS, preloads both accounts into a full resolver, and holds no seed', () => {
    const conf = renderAuthConf(bundle, '/data/jwt');
    const tcab = publicKeyOf(bundle.account.seed);
    const sys = publicKeyOf(bundle.systemAccount.seed);
    expect(conf).toContain(`operator: ${bundle.operator.jwt}\n`);
    expect(conf).toContain(`system_account: ${sys}\n`);
    expect(conf).toMatch(/resolver: \{\n {2}type: full\n {2}dir: "\/data\/jwt"\n {2}allow_delete: false\n\}/);
    expect(conf).toContain(`  ${tcab}: ${bundle.account.jwt}\n`);
    expect(conf).toContain(`  ${sys}: ${bundle.systemAccount.jwt}\n`);
    for (const seed of seedsOf(bundle)) expect(conf).not.toContain(seed);
    expect(conf).not.toMatch(/\bS[OAU][A-Z2-7]{56}\b/);
  });
});

describe('generateNatsAuth', () => {
  it("gives the Secret's three keys: a parseable bundle, its auth.conf and a reader credential signed by its account", async () => {
    const data = await generateNatsAuth({ resolverDir: '/var/jwt' });
    const b = parseNatsAuthBundle(data['bundle.json']);
    expect(data['auth.conf']).toBe(renderAuthConf(b, '/var/jwt'));
    const reader = decode<User>(userJwt(data['reader.creds']));
    expect(reader.iss).toBe(publicKeyOf(b.account.seed));
    expect(reader.exp).toBeUndefined();
    expect(reader.nats).toMatchObject(readerPermissions());
  });
});

describe('minting', () => {
  it("a run credential carries the run's permissions and expiry; its public key is the JWT's subject", async () => {
    const expiresAt = new Date(Date.now() + 3600_000);
    const run = await mintRunCredentials(bundle, 'r1', expiresAt);
    const claims = decode<User>(userJwt(run.creds));
    expect(claims).toMatchObject({ sub: run.publicKey, iss: publicKeyOf(bundle.account.seed), exp: Math.floor(expiresAt.getTime() / 1000) });
    expect(claims.nats).toMatchObject(runUserPermissions('r1'));
    expect(run.inboxPrefix).toBe('_INBOX_r1');
    expect(run.expiresAt).toEqual(new Date(Math.floor(expiresAt.getTime() / 1000) * 1000));
    expect(credentialsPublicKey(run.creds)).toBe(run.publicKey);
    expect(credentialsClaims(run.creds)).toEqual({ publicKey: run.publicKey, expiresAt: run.expiresAt });
    expect(credentialsClaims((await mintReaderCredentials(bundle)).creds)).not.toHaveProperty('expiresAt');
  });

  it('a new user key per credential (so one can be revoked alone)', async () => {
    const a = await mintReaderCredentials(bundle);
    const b = await mintReaderCredentials(bundle);
    expect(a.publicKey).not.toBe(b.publicKey);
  });

  it('refuses an expiry in the past or beyond the longest run credential life (revocations are pruned after it)', async () => {
    const now = new Date('2026-12-05T00:00:00Z');
    await expect(mintRunCredentials(bundle, 'r1', new Date(now.getTime() - 1), now)).rejects.toThrow(RangeError);
    await expect(mintRunCredentials(bundle, 'r1', new Date(now.getTime() + MAX_RUN_CREDENTIAL_LIFETIME_MS + 1000), now)).rejects.toThrow(RangeError);
    await expect(mintRunCredentials(bundle, 'r1', new Date(now.getTime() + MAX_RUN_CREDENTIAL_LIFETIME_MS), now)).resolves.toMatchObject({ inboxPrefix: '_INBOX_r1' });
  });

  it('credentialsPublicKey refuses a text that is not a .creds', () => {
    expect(() => credentialsPublicKey('hello')).toThrow(/not a NATS \.creds/);
  });
});
