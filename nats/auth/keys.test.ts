// The native key pairs are the nkeys key pairs: same public key, same private key encoding, same signature bytes
// (Ed25519 is deterministic), each verifying the other's; the speed they exist for is measured, not asserted.
import { createAccount, createOperator, createUser, fromSeed } from '@nats-io/nkeys';
import type { KeyPair } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { createUserKeyPair, keyPair } from './keys.ts';

const seedOf = (kp: KeyPair) => new TextDecoder().decode(kp.getSeed());

describe('native key pairs', () => {
  it.each([
    ['operator', createOperator],
    ['account', createAccount],
    ['user', createUser],
  ])('an %s key: the same keys and signatures as @nats-io/nkeys', (_kind, create) => {
    const reference = create();
    const native = keyPair(seedOf(reference));
    expect(native.getPublicKey()).toBe(reference.getPublicKey());
    expect(native.getPrivateKey()).toEqual(reference.getPrivateKey());
    expect(native.getSeed()).toEqual(reference.getSeed());
    const message = new TextEncoder().encode('header.claims');
    const signature = native.sign(message);
    expect(signature).toEqual(reference.sign(message));
    expect(reference.verify(message, signature)).toBe(true);
    expect(native.verify(message, signature)).toBe(true);
    expect(native.verify(new TextEncoder().encode('header.other'), signature)).toBe(false);
  });

  it('a new user key is a user seed nkeys reads back to the same public key', () => {
    const native = createUserKeyPair();
    expect(seedOf(native)).toMatch(/^SU[A-Z2-7]{56}$/);
    expect(fromSeed(native.getSeed()).getPublicKey()).toBe(native.getPublicKey());
    expect(native.getPublicKey()).toMatch(/^U[A-Z2-7]{55}$/);
    expect(createUserKeyPair().getPublicKey()).not.toBe(native.getPublicKey());
  });

  it('refuses a seed that is not one', () => {
    expect(() => keyPair('SUNOTASEED')).toThrow(/invalid checksum/);
  });
});
