// NATS NKeys (Ed25519) signing through node:crypto. @nats-io/nkeys's KeyPair derives the Ed25519 key pair again in
// pure JS at every getPublicKey/getPrivateKey/sign (about 20 ms each on the CI machine), and @nats-io/jwt calls
// them four or five times per credential: ~100 ms of blocked event loop per Run minted by the dispatcher. These
// key pairs hold the same keys (the nkeys text encodings come from @nats-io/nkeys's own Codec) and sign with
// node's native Ed25519, whose signatures are the same bytes (Ed25519 is deterministic): keys.test.ts checks both.
import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Prefix } from '@nats-io/nkeys';
import type { KeyPair } from '@nats-io/nkeys';
import { Codec } from '@nats-io/nkeys/lib/codec.js';

/** DER of a PKCS#8 Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_LENGTH = 44; // 12 bytes of header, then the 32-byte public key

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

class NativeKeyPair implements KeyPair {
  private readonly seed: Uint8Array;
  private readonly privateKey: KeyObject;
  private readonly publicKeyObject: KeyObject;
  private readonly rawPublic: Uint8Array;
  private readonly publicKey: string;

  constructor(seed: Uint8Array) {
    const { prefix, buf } = Codec.decodeSeed(seed);
    this.seed = seed;
    this.privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, buf]), format: 'der', type: 'pkcs8' });
    this.publicKeyObject = createPublicKey(this.privateKey);
    const spki = this.publicKeyObject.export({ format: 'der', type: 'spki' });
    if (spki.length !== SPKI_ED25519_LENGTH) throw new Error('unexpected Ed25519 public key encoding');
    this.rawPublic = new Uint8Array(spki.subarray(SPKI_ED25519_LENGTH - 32));
    this.publicKey = text(Codec.encode(prefix, this.rawPublic));
  }

  getPublicKey(): string {
    return this.publicKey;
  }

  /** As nkeys: the 64-byte Ed25519 secret key (seed + public key), nkeys-encoded. */
  getPrivateKey(): Uint8Array {
    const { buf } = Codec.decodeSeed(this.seed);
    return Codec.encode(Prefix.Private, new Uint8Array([...buf, ...this.rawPublic]));
  }

  getSeed(): Uint8Array {
    return this.seed;
  }

  sign(input: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, input, this.privateKey));
  }

  verify(input: Uint8Array, sig: Uint8Array): boolean {
    return verify(null, input, this.publicKeyObject, sig);
  }

  clear(): void {
    this.seed.fill(0);
  }

  seal(): Uint8Array {
    throw new Error('not a curve key');
  }

  open(): Uint8Array | null {
    throw new Error('not a curve key');
  }
}

/** The key pair of an encoded seed (`SO…`, `SA…`, `SU…`). */
export function keyPair(seed: string): KeyPair {
  return new NativeKeyPair(new TextEncoder().encode(seed));
}

/** A new user key pair (a fresh random seed). */
export function createUserKeyPair(): KeyPair {
  return new NativeKeyPair(Codec.encodeSeed(Prefix.User, new Uint8Array(randomBytes(32))));
}
