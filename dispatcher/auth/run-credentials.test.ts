// A Run's NATS credential as data (its Secret, name, expiry, the Pod's label) and when it is revoked.
import { describe, expect, it } from 'vitest';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { decode } from '@nats-io/jwt';
import { MAX_RUN_CREDENTIAL_LIFETIME_MS, generateNatsAuth, mintRunCredentials, parseNatsAuthBundle } from '../../nats/auth/index.ts';
import { createLogger } from '../../shared/log.ts';
import { RunMemory } from '../controller/run-memory.ts';
import { buildDriverPod, driverPodName } from '../pods/driver-pod.ts';
import { dispatcherConfig } from '../config.ts';
import { RunSpec } from '../../shared/run.ts';
import { CREDENTIAL_MARGIN_MS, CREDS_KEY, NATS_USER_EXPIRES_LABEL, NATS_USER_LABEL, RunCredentialIssuer, credentialExpiry, labelNatsUser, natsUserOf, runCredentialsSecret, runCredentialsSecretName } from './run-credentials.ts';

const ref = { namespace: 'evals', name: 'fix-bug', uid: '0f0e0d0c-0b0a-0908-0706-050403020100' };
const now = new Date('2026-12-05T02:00:00Z');
const podOf = (uid: string, user?: string, expires?: string): V1Pod => ({ metadata: { name: driverPodName(ref), labels: { ...(user ? { [NATS_USER_LABEL]: user } : {}), ...(expires ? { [NATS_USER_EXPIRES_LABEL]: expires } : {}) }, ownerReferences: [{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', name: ref.name, uid }] } });

describe('the run credential as data', () => {
  it('is named after the driver Pod and the Run\'s uid (an earlier Run of the name has another)', () => {
    expect(runCredentialsSecretName(ref)).toBe(`tcab-run-fix-bug-nats-${ref.uid}`);
    expect(runCredentialsSecretName({ ...ref, uid: 'another' })).not.toBe(runCredentialsSecretName(ref));
    const long = { ...ref, name: 'x'.repeat(200) };
    expect(runCredentialsSecretName(long).length).toBeLessThanOrEqual(253);
  });

  it('expires at the Run\'s limit plus the margin, never past what nats/auth allows', () => {
    expect(credentialExpiry(3600, now).getTime() - now.getTime()).toBe(3600_000 + CREDENTIAL_MARGIN_MS);
    expect(credentialExpiry(7 * 24 * 3600, now).getTime() - now.getTime()).toBe(MAX_RUN_CREDENTIAL_LIFETIME_MS);
  });

  it('is a Secret owned by the Run (controller, like its Pod), immutable, its user key and expiry labelled', async () => {
    const minted = await mintRunCredentials(parseNatsAuthBundle((await generateNatsAuth())['bundle.json']), 'evals_fix-bug', credentialExpiry(600, now), now);
    const secret = runCredentialsSecret(ref, minted);
    expect(secret).toMatchObject({
      metadata: { name: runCredentialsSecretName(ref), namespace: 'evals', labels: { [NATS_USER_LABEL]: minted.publicKey, [NATS_USER_EXPIRES_LABEL]: String(minted.expiresAt.getTime() / 1000) }, ownerReferences: [{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', name: 'fix-bug', uid: ref.uid, controller: true }] },
      immutable: true,
      stringData: { [CREDS_KEY]: minted.creds },
    });
    const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)/.exec(minted.creds)![1]!;
    expect(decode(jwt).exp).toBe(Math.floor(credentialExpiry(600, now).getTime() / 1000));
  });

  it('puts the user on the Run\'s own Pod only, and reads it back only from a Pod of this Run', () => {
    const spec = RunSpec.parse({ harness: 'gg', model: 'm', prompt: 'p' });
    const user = { publicKey: 'UKEY', expiresAt: new Date('2026-12-05T09:00:00Z') };
    const pod = labelNatsUser(buildDriverPod(ref, spec, dispatcherConfig({}), [], { natsCredsSecret: runCredentialsSecretName(ref) }), { secret: runCredentialsSecretName(ref), user });
    expect(pod.metadata!.labels).toMatchObject({ [NATS_USER_LABEL]: 'UKEY', [NATS_USER_EXPIRES_LABEL]: '1796461200', 'tcab.dev/run': 'fix-bug' });
    expect(natsUserOf(pod, ref.uid)).toEqual(user);
    expect(natsUserOf(pod, 'an-earlier-run')).toBeUndefined();
    expect(natsUserOf(podOf(ref.uid, 'UKEY', 'soon'), ref.uid)).toEqual({ publicKey: 'UKEY' });
    expect(labelNatsUser(podOf(ref.uid), { secret: 's' }).metadata!.labels).not.toHaveProperty(NATS_USER_LABEL);
  });
});

describe('RunCredentialIssuer.retire', () => {
  /** fail: how many revocations fail before they succeed (Infinity: all). */
  const issuer = (revoked: string[], fail = 0, onRevoke: () => void = () => undefined) => {
    const memory = new RunMemory();
    let failures = 0;
    const revoke = (key: string, expiresAt?: Date) => {
      revoked.push(expiresAt ? `${key}@${expiresAt.toISOString()}` : key);
      onRevoke();
      return failures++ < fail ? Promise.reject(new Error('no NATS')) : Promise.resolve();
    };
    return { memory, credentials: new RunCredentialIssuer({ core: {} as CoreV1Api, memory, bundle: {} as never, revoke, log: createLogger({ component: 't', level: 'silent' }), retryMinTimeoutMs: 1 }) };
  };

  it('revokes the key on the Run\'s Pod once, however often the final Run is looked at', () => {
    const revoked: string[] = [];
    const { credentials } = issuer(revoked);
    credentials.retire('evals/fix-bug', ref, podOf(ref.uid, 'UPOD', '1796461200'), 'final');
    credentials.retire('evals/fix-bug', ref, podOf(ref.uid, 'UPOD', '1796461200'), 'final');
    credentials.retire('evals/fix-bug', ref, undefined, 'final');
    expect(revoked).toEqual(['UPOD@2026-12-05T09:00:00.000Z']);
  });

  it('uses the key this dispatcher minted when the Pod is gone, and nothing without a key or for another Run\'s Pod', async () => {
    const revoked: string[] = [];
    const { credentials, memory } = issuer(revoked, Infinity);
    memory.entry('evals/fix-bug', ref.uid).natsUser = { publicKey: 'UMINTED' };
    credentials.retire('evals/fix-bug', ref, undefined, 'final');
    credentials.retire('evals/other', { ...ref, name: 'other', uid: 'u2' }, podOf('an-earlier-run', 'UFOREIGN'), 'deleted');
    credentials.retire('evals/none', { ...ref, name: 'none', uid: 'u3' }, undefined, 'final');
    expect(revoked).toEqual(['UMINTED']);
    // A failed revocation is logged, not thrown (the expiry is the backstop), and not retried forever.
    await Promise.resolve();
    expect(memory.peek('evals/fix-bug', ref.uid)?.natsRetired).toBe(true);
  });

  it('tries a failed revocation again (a system connection hung on a lost NATS server) until it goes through, a bounded number of times', async () => {
    const revoked: string[] = [];
    const third = Promise.withResolvers<void>();
    const { credentials } = issuer(revoked, 2, () => revoked.length === 3 && third.resolve());
    credentials.retire('evals/fix-bug', ref, podOf(ref.uid, 'UPOD'), 'retried');
    await third.promise;
    expect(revoked).toEqual(['UPOD', 'UPOD', 'UPOD']);

    // Never going through: 1 + 5 tries, then the give-up line (the expiry is the backstop), and no more tries.
    const never: string[] = [];
    const gaveUp = Promise.withResolvers<void>();
    const lines: string[] = [];
    const log = createLogger({ component: 't', level: 'warn', destination: { write: (line: string) => {
      lines.push(line);
      if (line.includes('it expires on its own')) gaveUp.resolve();
    } } });
    let calls = 0;
    const failing = new RunCredentialIssuer({ core: {} as CoreV1Api, memory: new RunMemory(), bundle: {} as never, log, retryMinTimeoutMs: 1, revoke: (key) => (never.push(key), calls++, Promise.reject(new Error('no NATS'))) });
    failing.retire('evals/x', { ...ref, name: 'x', uid: 'ux' }, podOf('ux', 'UX'), 'final');
    await gaveUp.promise;
    expect(calls).toBe(6);
    expect(lines.filter((l) => l.includes('trying again'))).toHaveLength(5);
  });
});
