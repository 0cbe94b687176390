// One NATS user per Run (nats/auth: it may publish only that run's subjects), handed to that Run's driver Pod only.
// At the claim, before the Pod is created, a Secret holding the user's `.creds` is created, owned by the Run (the
// garbage collector removes it with the Run) and named after the Pod and the Run's uid; the Pod mounts it root-only
// (pods/driver-pod.ts). When the Run is final (or deleted), the user is revoked: the NATS server drops the driver's
// connection and refuses it from then on. Revocation is best effort: the credential also expires, at the Run's
// own time limit plus CREDENTIAL_MARGIN_MS.
//
// The user's public key (what a revocation names; public, not a secret) and its expiry (a revocation entry is kept
// in the account JWT until then, no longer: nats/auth revoke.ts) are labels on the driver Pod and the Secret, and
// are in the Run's memory until the Pod shows them: the dispatcher cannot read Secrets (its Role may only create
// them), and a dispatcher that took over leadership finds them on the cached Pod.
import type { CoreV1Api, V1Pod, V1Secret } from '@kubernetes/client-node';
import pRetry from 'p-retry';
import { API_VERSION, GROUP } from '../../shared/api-group.ts';
import type { Logger } from '../../shared/log.ts';
import { MAX_RUN_CREDENTIAL_LIFETIME_MS, mintRunCredentials } from '../../nats/auth/index.ts';
import type { NatsAuthBundle, RunCredentials } from '../../nats/auth/index.ts';
import { errorMessage, isAlreadyExists } from '../../kube/errors.ts';
import { clusterRunId, driverPodName } from '../pods/driver-pod.ts';
import type { RunRef } from '../pods/driver-pod.ts';
import type { RunMemory } from '../controller/run-memory.ts';
import { ownedBy } from '../controller/run-view.ts';

/** The run user's public key, on the driver Pod and its credential Secret. */
export const NATS_USER_LABEL = `${GROUP}/nats-user`;
/** When that user's credential expires, in unix seconds (a label value cannot hold an RFC 3339 time). */
export const NATS_USER_EXPIRES_LABEL = `${GROUP}/nats-user-expires`;
/** The Secret key the driver Pod mounts (pods/driver-pod.ts NATS_CREDS_PATH). */
export const CREDS_KEY = 'nats.creds';
/**
 * How long a run credential outlives the Run's time limit: the Pod may wait for a node and pull its image before
 * the run's clock starts, and the driver reports its teardown after it. A credential that expired before its run
 * ended would lose the run's result, so the margin is wide; a normal end revokes it anyway.
 */
export const CREDENTIAL_MARGIN_MS = 6 * 3600_000;

/**
 * `<driver pod name>-nats-<run uid>`. The uid makes it this Run's alone: a Secret of an earlier Run of the same
 * name, not yet garbage-collected, has another name, so the new Run never mounts a credential revoked with the old.
 */
export function runCredentialsSecretName(ref: RunRef): string {
  return `${driverPodName(ref)}-nats-${ref.uid}`;
}

/** When a credential minted `now` for a run of `maxRuntimeSeconds` expires (nats/auth caps its lifetime). Pure. */
export function credentialExpiry(maxRuntimeSeconds: number, now: Date): Date {
  return new Date(now.getTime() + Math.min(maxRuntimeSeconds * 1000 + CREDENTIAL_MARGIN_MS, MAX_RUN_CREDENTIAL_LIFETIME_MS));
}

/** The Run's credential Secret: owned by the Run (controller, like its Pod), immutable, the key labelled. Pure. */
export function runCredentialsSecret(ref: RunRef, minted: Pick<RunCredentials, 'creds' | 'publicKey' | 'expiresAt'>): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: runCredentialsSecretName(ref),
      namespace: ref.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'tcab-dispatcher', ...userLabels(minted) },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Run', name: ref.name, uid: ref.uid, controller: true, blockOwnerDeletion: true }],
    },
    type: 'Opaque',
    immutable: true,
    stringData: { [CREDS_KEY]: minted.creds },
  };
}

/** The run user's public key and credential expiry: what a revocation needs (see above). */
export interface RunUser {
  publicKey: string;
  /** Unknown on a Pod labelled before expiries were: the revocation entry is then kept for the longest life. */
  expiresAt?: Date;
}

function userLabels(user: RunUser): Record<string, string> {
  return { [NATS_USER_LABEL]: user.publicKey, ...(user.expiresAt ? { [NATS_USER_EXPIRES_LABEL]: String(Math.floor(user.expiresAt.getTime() / 1000)) } : {}) };
}

/** The run user as the Run's own driver Pod carries it (a Pod of an earlier Run of the name: none). */
export function natsUserOf(pod: V1Pod | undefined, runUid: string): RunUser | undefined {
  const labels = pod && ownedBy(pod, runUid) ? pod.metadata?.labels : undefined;
  const publicKey = labels?.[NATS_USER_LABEL];
  if (!publicKey) return undefined;
  const seconds = Number(labels[NATS_USER_EXPIRES_LABEL]);
  return { publicKey, ...(Number.isInteger(seconds) && seconds > 0 ? { expiresAt: new Date(seconds * 1000) } : {}) };
}

export interface IssuedCredential {
  /** The Secret's name: the Pod builder's natsCredsSecret. */
  secret: string;
  /** The user, for the Pod's labels; unknown when an earlier leader made the Secret. */
  user?: RunUser;
}

export interface RunCredentialIssuerDeps {
  core: CoreV1Api;
  memory: RunMemory;
  bundle: NatsAuthBundle;
  /** Revokes a user now (nats/auth revokeRunUser through the dispatcher's system connection). */
  revoke: (publicKey: string, expiresAt?: Date) => Promise<void>;
  log: Logger;
  now?: () => Date;
  /** The first wait before a failed revocation is tried again (doubling; REVOKE_RETRIES times). */
  retryMinTimeoutMs?: number;
}

/**
 * Revocations tried again: the system connection hangs for a while when its NATS server goes (a node lost) until
 * the client's pings notice and it reconnects to another; 2+4+...+32 s outlasts that, and a fence that waits for
 * the credential's expiry (hours) is no fence.
 */
const REVOKE_RETRIES = 5;

export class RunCredentialIssuer {
  private readonly deps: RunCredentialIssuerDeps;

  constructor(deps: RunCredentialIssuerDeps) {
    this.deps = deps;
  }

  /**
   * The Run's credential Secret, created unless it exists (a retry of this claim: its first credential stands and
   * is used). `key` is the Run's memory key.
   */
  async issue(key: string, ref: RunRef, maxRuntimeSeconds: number): Promise<IssuedCredential> {
    const memo = this.deps.memory.entry(key, ref.uid);
    const secret = runCredentialsSecretName(ref);
    const now = this.deps.now?.() ?? new Date();
    const minted = await mintRunCredentials(this.deps.bundle, clusterRunId(ref), credentialExpiry(maxRuntimeSeconds, now), now);
    try {
      await this.deps.core.createNamespacedSecret({ namespace: ref.namespace, body: runCredentialsSecret(ref, minted) });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      return { secret, user: memo.natsUser };
    }
    memo.natsUser = { publicKey: minted.publicKey, expiresAt: minted.expiresAt };
    return { secret, user: memo.natsUser };
  }

  /**
   * The run is over (final, or its Run deleted): its user is revoked, once per Run and dispatcher, in the
   * background. Without a known key (a claim by an earlier leader whose Pod is gone) the expiry is the backstop.
   */
  retire(key: string, ref: RunRef, pod: V1Pod | undefined, why: string): void {
    const memo = this.deps.memory.peek(key, ref.uid);
    if (memo?.natsRetired) return;
    const user = natsUserOf(pod, ref.uid) ?? memo?.natsUser;
    if (!user) return;
    const publicKey = user.publicKey;
    // Marked before the revocation ends: a second look at the final Run must not send it again.
    this.deps.memory.entry(key, ref.uid).natsRetired = true;
    pRetry(() => this.deps.revoke(publicKey, user.expiresAt), {
      retries: REVOKE_RETRIES,
      minTimeout: this.deps.retryMinTimeoutMs ?? 2000,
      factor: 2,
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0) this.deps.log.warn({ run: key, user: publicKey, why, attempt: attemptNumber, err: errorMessage(error) }, 'revoking the run\'s NATS user failed; trying again');
      },
    }).then(
      () => this.deps.log.info({ run: key, user: publicKey, why }, 'revoked the run\'s NATS user'),
      (error: unknown) => this.deps.log.warn({ run: key, user: publicKey, why, err: errorMessage(error) }, 'revoking the run\'s NATS user failed; it expires on its own'),
    );
  }
}

/** Labels the driver Pod with its run user (see above), when it is known. */
export function labelNatsUser(pod: V1Pod, issued: IssuedCredential | undefined): V1Pod {
  if (issued?.user) pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, ...userLabels(issued.user) } };
  return pod;
}
