// One model-gateway token per Run (issue 34), handed to that Run's driver Pod only, in place of the provider key.
// At the claim, before the Pod is created, the dispatcher mints it (the gateway's tokens are stateless: whoever
// holds the signing key mints, gateway/token.ts) and creates a Secret holding it, owned by the Run (the garbage
// collector removes it with the Run) and named after the Pod and the Run's uid; the Pod takes it by secretKeyRef
// (pods/driver-pod.ts). When the Run is final (or deleted) the attempt is revoked at the gateway, so a token copied
// out of the run spends nothing more. Revocation is best effort: the token also expires, at the Run's own time limit
// plus the NATS credential's margin.
//
// As with the NATS credential, the dispatcher cannot read the Secret back (its Role may only create Secrets): that
// a Run's token was minted is in the Run's memory and on its Pod (GATEWAY_LABEL), so a dispatcher that took over
// leadership still revokes it. The token itself is never logged.
import type { CoreV1Api, V1Pod, V1Secret } from '@kubernetes/client-node';
import pRetry, { AbortError } from 'p-retry';
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { claimsFor, mintToken } from '../../gateway/token.ts';
import { API_VERSION } from '../../shared/api-group.ts';
import { concurrently } from '../../shared/concurrently.ts';
import { GATEWAY_CONTROL, RevokeRequest } from '../../shared/gateway.ts';
import type { RunBudget } from '../../shared/gateway.ts';
import type { Logger } from '../../shared/log.ts';
import type { ClusterGateway } from '../config.ts';
import type { RunMemory } from '../controller/run-memory.ts';
import { ownedBy } from '../controller/run-view.ts';
import { errorMessage, isAlreadyExists } from '../../kube/errors.ts';
import { GATEWAY_LABEL, GATEWAY_TOKEN_KEY, attemptId, clusterRunId, driverPodName } from '../pods/driver-pod.ts';
import type { RunRef } from '../pods/driver-pod.ts';
import { CREDENTIAL_MARGIN_MS } from './run-credentials.ts';

/**
 * The longest token the gateway accepts: its default maxTokenLifetimeSeconds (gateway/server.ts); a token whose
 * expiry lies further ahead is refused as lifetime_too_long, so a week-long Run's token stops at a week.
 */
export const MAX_GATEWAY_TOKEN_LIFETIME_S = 7 * 24 * 3600;
/** Revocation attempts after the first, and the wait for each answer. */
const REVOKE_RETRIES = 4;
const REVOKE_TIMEOUT_MS = 10_000;

/** `<driver pod name>-gw-<run uid>`: this Run's alone (an earlier Run of the name, not yet collected, has another). */
export function gatewayTokenSecretName(ref: RunRef): string {
  return `${driverPodName(ref)}-gw-${ref.uid}`;
}

/**
 * How long a token minted for a run of `maxRuntimeSeconds` lives: the Run's limit plus the NATS credential's margin
 * (the Pod may wait for a node and pull its image before the run's clock starts), at most what the gateway accepts.
 */
export function tokenLifetimeSeconds(maxRuntimeSeconds: number): number {
  return Math.min(maxRuntimeSeconds + CREDENTIAL_MARGIN_MS / 1000, MAX_GATEWAY_TOKEN_LIFETIME_S);
}

/** The Run's token Secret: owned by the Run (controller, like its Pod), immutable. Pure. */
export function gatewayTokenSecret(ref: RunRef, token: string, provider: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: gatewayTokenSecretName(ref),
      namespace: ref.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'tcab-dispatcher', [GATEWAY_LABEL]: provider },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Run', name: ref.name, uid: ref.uid, controller: true, blockOwnerDeletion: true }],
    },
    type: 'Opaque',
    immutable: true,
    stringData: { [GATEWAY_TOKEN_KEY]: token },
  };
}

/** The revocation's body: the attempt the token was minted for (run id and Run uid, as in its claims). */
export function revokeRequestOf(ref: RunRef): RevokeRequest {
  return RevokeRequest.parse({ run: clusterRunId(ref), attempt: attemptId(ref) });
}

export interface GatewayTokenIssuerDeps {
  core: CoreV1Api;
  memory: RunMemory;
  gateway: ClusterGateway;
  log: Logger;
  now?: () => Date;
  /** undici dispatcher for the revocations (tests); default the global one. */
  dispatcher?: Dispatcher;
  /** Wait before the first retry of a revocation (tests shorten it). */
  retryMinTimeoutMs?: number;
}

export class GatewayTokenIssuer {
  private readonly deps: GatewayTokenIssuerDeps;

  constructor(deps: GatewayTokenIssuerDeps) {
    this.deps = deps;
  }

  /**
   * The Run's token Secret, created unless it exists (a retry of this claim: its first token stands and is used).
   * Returns the Secret's name. `key` is the Run's memory key.
   */
  async issue(key: string, ref: RunRef, spec: { maxRuntimeSeconds: number; budget?: RunBudget }, provider: string): Promise<string> {
    const nowMs = (this.deps.now?.() ?? new Date()).getTime();
    const token = mintToken(claimsFor(clusterRunId(ref), attemptId(ref), tokenLifetimeSeconds(spec.maxRuntimeSeconds), nowMs, spec.budget), this.deps.gateway.signingKey);
    try {
      await this.deps.core.createNamespacedSecret({ namespace: ref.namespace, body: gatewayTokenSecret(ref, token, provider) });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    // Either way a token of this attempt exists: its revocation is owed.
    this.deps.memory.entry(key, ref.uid).gatewayToken = true;
    return gatewayTokenSecretName(ref);
  }

  /**
   * The run is over (final, or its Run deleted): its attempt is revoked at the gateway, once per Run and dispatcher,
   * in the background. Without a sign of a token (this dispatcher's memory, or the Run's own Pod labelled) nothing is
   * sent: a Run that never used the gateway costs no request, and an unknown token expires on its own.
   */
  retire(key: string, ref: RunRef, pod: V1Pod | undefined, why: string): void {
    const memo = this.deps.memory.peek(key, ref.uid);
    if (memo?.gatewayRetired) return;
    const labelled = pod !== undefined && ownedBy(pod, ref.uid) && pod.metadata?.labels?.[GATEWAY_LABEL] !== undefined;
    if (!memo?.gatewayToken && !labelled) return;
    // Marked before the revocation ends: a second look at the final Run must not send it again.
    this.deps.memory.entry(key, ref.uid).gatewayRetired = true;
    this.revoke(ref).then(
      () => this.deps.log.info({ run: key, why }, 'revoked the run\'s gateway token'),
      (error: unknown) => this.deps.log.warn({ run: key, why, err: errorMessage(error) }, 'revoking the run\'s gateway token failed; it expires on its own'),
    );
  }

  /**
   * The gateway restarted and forgot its revocations: the attempts of these final Runs (whose tokens may not have
   * expired yet) are revoked again, a few at a time. Resolves with how many the gateway took.
   */
  async revokeAgain(refs: readonly RunRef[]): Promise<number> {
    let done = 0;
    await concurrently(refs, 4, async (ref) => {
      try {
        await this.revoke(ref);
        done += 1;
      } catch (error) {
        this.deps.log.warn({ run: `${ref.namespace}/${ref.name}`, err: errorMessage(error) }, 'revoking a final run\'s gateway token again failed; it expires on its own');
      }
    });
    return done;
  }

  /** POST /tcab/revoke with the admin token; retried on network errors, timeouts and 5xx/408/429, not on other 4xx. */
  private async revoke(ref: RunRef): Promise<void> {
    const { url, adminToken } = this.deps.gateway;
    const body = JSON.stringify(revokeRequestOf(ref));
    await pRetry(
      async () => {
        const answer = await request(`${url}${GATEWAY_CONTROL.revoke}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body,
          headersTimeout: REVOKE_TIMEOUT_MS,
          bodyTimeout: REVOKE_TIMEOUT_MS,
          ...(this.deps.dispatcher ? { dispatcher: this.deps.dispatcher } : {}),
        });
        await answer.body.dump();
        const status = answer.statusCode;
        if (status >= 200 && status < 300) return;
        const failure = new Error(`the gateway answered ${status} to ${GATEWAY_CONTROL.revoke}`);
        if (status >= 500 || status === 408 || status === 429) throw failure;
        throw new AbortError(failure);
      },
      { retries: REVOKE_RETRIES, minTimeout: this.deps.retryMinTimeoutMs ?? 500, factor: 2 },
    );
  }
}
