// The auth Secret as data: what the dispatcher creates, and how it reads one back (errors name the Secret and the
// key or field, never a value).
import { describe, expect, it } from 'vitest';
import type { V1Secret } from '@kubernetes/client-node';
import { generateNatsAuth, parseNatsAuthBundle } from '../../nats/auth/index.ts';
import { authSecretBody, bundleFromSecret } from './auth-secret.ts';

const ref = { namespace: 'tcab', name: 'tcab-nats-auth', serviceAccount: 'tcab-dispatcher' };
const owner = { apiVersion: 'v1', kind: 'ServiceAccount', name: 'tcab-dispatcher', uid: '11111111-2222-3333-4444-555555555555' };
/** What the apiserver answers: data, base64. */
const asRead = (data: Record<string, string>): V1Secret => ({ data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });

describe('authSecretBody', () => {
  it('holds the three keys, is immutable, and is owned by the ServiceAccount (not a controller: nothing reconciles it)', async () => {
    const data = await generateNatsAuth();
    const body = authSecretBody(ref, data, owner);
    expect(body).toMatchObject({ metadata: { name: 'tcab-nats-auth', namespace: 'tcab', ownerReferences: [owner] }, type: 'Opaque', immutable: true });
    expect(Object.keys(body.stringData!).sort()).toEqual(['auth.conf', 'bundle.json', 'reader.creds']);
    expect(body.metadata!.ownerReferences![0]).not.toHaveProperty('blockOwnerDeletion');
    expect(authSecretBody(ref, data).metadata).not.toHaveProperty('ownerReferences');
  });
});

describe('bundleFromSecret', () => {
  it('reads back the bundle it was made with', async () => {
    const data = await generateNatsAuth();
    expect(bundleFromSecret(ref, asRead(data))).toEqual(parseNatsAuthBundle(data['bundle.json']));
  });

  it('names the Secret and the key or field when it cannot, never a value', async () => {
    const data = await generateNatsAuth();
    const bundle = JSON.parse(data['bundle.json']) as { account: { seed: string } };
    const seed = bundle.account.seed;
    expect(() => bundleFromSecret(ref, asRead({ 'auth.conf': 'x' }))).toThrow('the NATS auth Secret tcab/tcab-nats-auth has no key bundle.json');
    const notJson = () => bundleFromSecret(ref, asRead({ 'bundle.json': `${seed} and more` }));
    expect(notJson).toThrow('has an invalid bundle.json (not JSON)');
    expect(notJson).not.toThrow(seed.slice(0, 12));
    const badField = () => bundleFromSecret(ref, asRead({ 'bundle.json': JSON.stringify({ ...bundle, account: { ...bundle.account, seed: `${seed}X` } }) }));
    expect(badField).toThrow('(field account.seed)');
    expect(badField).not.toThrow(seed.slice(0, 12));
  });
});
