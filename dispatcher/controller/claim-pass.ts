// The claim pass (Kueue's scheduler over the pure decideClaims, claims/decide.ts): runs when the queue or the
// capacity changed (a Run queued, a Run or its Pod gone, a HarnessConfig or Secret changed, leadership gained),
// never per watch event; triggers while a pass runs fold into one more pass (its work queue's dedupe).
// The claim IS the Pod create: the Pod's name is derived from the Run and the Run owns it, so a second create
// (another leader, a retry) gets 409 AlreadyExists and there is never a second Pod. A Run whose Pod exists holds
// its slot whether or not its status says so yet, so a dispatcher that dies between the create and the status
// write neither loses the Run nor over-claims. Status writes (Dispatched, ...) follow in the Runs' reconciles.
import type { CoreV1Api } from '@kubernetes/client-node';
import { getHarness, manifestForModel } from '../../harnesses/registry.ts';
import { apiKeySources } from '../../shared/auth.ts';
import type { Logger } from '../../shared/log.ts';
import { AUTH_MODE_SETTINGS, RunSpec, runLifetimeSeconds } from '../../shared/run.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { runProtocol } from '../../shared/run-protocol.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { concurrently } from '../../shared/concurrently.ts';
import { labelNatsUser } from '../auth/run-credentials.ts';
import type { RunCredentialIssuer } from '../auth/run-credentials.ts';
import type { GatewayTokenIssuer } from '../auth/gateway-tokens.ts';
import { decideClaims } from '../claims/decide.ts';
import { runTargetOf } from '../claims/run-provider.ts';
import { heldMessage, RELEASED_MESSAGE, ThrottleAdmission } from '../claims/throttle-admission.ts';
import type { AdmissionDecision, PendingRun } from '../claims/throttle-admission.ts';
import type { ThrottleBook } from '../claims/throttle.ts';
import type { QueuedRun } from '../claims/decide.ts';
import { serializedLoginResolver } from '../claims/serialized-login.ts';
import type { DispatcherConfig } from '../config.ts';
import { errorMessage, isAlreadyExists, isNotFound } from '../../kube/errors.ts';
import type { RunObject } from '../../kube/resources.ts';
import { clusterAvailability } from '../pods/availability.ts';
import { buildDriverPod, clusterRunIdProblem, driverPodName, eventsSubject } from '../pods/driver-pod.ts';
import type { RunRef } from '../pods/driver-pod.ts';
import { nextAttemptNumber } from '../status/retry.ts';
import { decideEgress, hostAliasesOf, installHostsOf, namesToResolve } from '../pods/egress.ts';
import { DEFAULT_NPM_REGISTRY } from '../../shared/driver-env.ts';
import type { RunEgressPlan } from '../pods/egress.ts';
import { planGateway } from '../pods/gateway-plan.ts';
import type { GatewayPlan } from '../pods/gateway-plan.ts';
import { HostResolver } from '../pods/host-resolver.ts';
import { isFinal } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import type { Caches } from './informers.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { RunMemory } from './run-memory.ts';
import { objectKey, ownedBy, runRef } from './run-view.ts';
import type { WriteOutcome } from './status-writer.ts';
import type { ReconcileResult } from './work-queue.ts';

/** Claims (Pod creates) in flight at once, and likewise Run reconciles. */
export const CLAIM_CONCURRENCY = 16;
/** A Pod of an earlier Run of the same name still going away: its Run is claimed again after this. */
const FOREIGN_POD_RETRY_MS = 1000;

export interface ClaimPassDeps {
  core: CoreV1Api;
  caches: Caches;
  memory: RunMemory;
  settings: DispatcherConfig;
  metrics: DispatcherMetrics;
  statusOf: (run: RunObject) => RunStatus;
  write: (run: RunObject, observation: Observation) => Promise<WriteOutcome>;
  /** Purges an earlier Run's messages under this run id before the new Run's Pod exists. */
  forgetRun: (run: RunObject, why: string) => Promise<void>;
  /** With NATS auth: each Run's own NATS user, in a Secret its Pod mounts (auth/run-credentials.ts). */
  credentials?: RunCredentialIssuer;
  /** With the cluster's model gateway (TCAB_GATEWAY_URL): each Run's own token, in a Secret its Pod takes (auth/gateway-tokens.ts). */
  gatewayTokens?: GatewayTokenIssuer;
  /** Addresses for driver Pods' /etc/hosts (TCAB_DRIVER_DNS=hosts); default: the dispatcher's own resolver. */
  hosts?: HostResolver;
  /** Provider back-pressure (claims/throttle.ts), fed by the gateway poller: Runs of a held provider+model stay queued. */
  throttles?: { book: ThrottleBook; now: () => number };
  log: Logger;
}

const at = () => new Date().toISOString();

export class ClaimPass {
  private readonly deps: ClaimPassDeps;
  private readonly hosts: HostResolver;
  /** The Pod creates of the pass in flight, if it is making any. */
  private claiming: Promise<void> | undefined;
  private readonly admission = new ThrottleAdmission();
  /** Runs whose LoginBusy condition this dispatcher set True (written once per wait, released when the login frees). */
  private readonly loginWaiting = new Set<string>();

  constructor(deps: ClaimPassDeps) {
    this.deps = deps;
    this.hosts = deps.hosts ?? new HostResolver();
  }

  /**
   * Resolves once no claims are being made. Run reconciles wait on it, so under a burst starting work comes first
   * and statuses follow; a pass with nothing to claim (most passes: a Run ended, nothing queued) holds nobody up.
   */
  settled(): Promise<void> {
    return this.claiming ?? Promise.resolve();
  }

  async run(): Promise<ReconcileResult> {
    const { caches, settings, metrics } = this.deps;
    const queued: QueuedRun[] = [];
    const byKey = new Map<string, RunObject>();
    // Runs sharing a login whose refresh token rotates on use go one at a time (issue 34, claims/serialized-login.ts).
    const loginOf = serializedLoginResolver(settings, new Set(caches.secrets.list().map((s) => s.metadata!.name!)), (slug, model) => manifestForModel(getHarness(slug), model));
    const nowMs = Date.now();
    let backoffLeftMs = Infinity;
    for (const r of caches.runs.list()) {
      const status = this.deps.statusOf(r);
      const phase = status.phase ?? 'Pending';
      // Final Runs hold nothing; a Run cancelled before its claim is ended by its reconcile, never claimed.
      if (isFinal({ phase }) || (phase === 'Pending' && r.spec.cancel === true)) continue;
      // Its last attempt failed on infrastructure: not claimed before its back-off is over, and it holds no slot
      // meanwhile. It keeps its age, so it goes before the Runs queued after it once the wait is over.
      const waitMs = phase === 'Pending' && status.nextAttemptTime ? Date.parse(status.nextAttemptTime) - nowMs : 0;
      if (waitMs > 0) {
        backoffLeftMs = Math.min(backoffLeftMs, waitMs);
        continue;
      }
      const key = objectKey(r);
      if (phase === 'Pending') byKey.set(key, r);
      const login = loginOf(r.spec);
      queued.push({ key, harness: String(r.spec.harness ?? ''), phase, createdAt: phase === 'Pending' ? new Date(r.metadata!.creationTimestamp ?? 0).getTime() : 0, ...(login === undefined ? {} : { login }) });
    }
    const admission = this.admit(byKey, queued);
    const limits = Object.fromEntries(caches.configs.list().map((c) => [c.metadata!.name!, c.spec.maxParallelism]));
    const started = performance.now();
    const decision = decideClaims({ runs: queued, limits, maxInFlight: settings.TCAB_DISPATCHER_MAX_INFLIGHT });
    let retryForeign = false;
    let failed = 0;
    // Claims of different Runs are independent: a few at a time keep the apiserver busy without flooding it.
    const claiming = concurrently(decision.claim.map((k) => byKey.get(k)!), CLAIM_CONCURRENCY, async (run) => {
      const t0 = performance.now();
      try {
        if ((await this.claimOne(run)) === 'foreign') retryForeign = true;
      } catch (error) {
        failed += 1;
        this.deps.log.warn({ run: objectKey(run), err: errorMessage(error) }, 'claim failed; retrying with backoff');
      }
      metrics.claimLatency.observe((performance.now() - t0) / 1000);
    });
    if (decision.claim.length > 0) this.claiming = claiming;
    try {
      await claiming;
    } finally {
      this.claiming = undefined;
    }
    if (decision.claim.length > 0) this.deps.log.info({ claimed: decision.claim.length - failed, failed, ms: Math.round(performance.now() - started) }, 'claimed runs');
    await this.noteAdmission(admission, byKey, decision.claim);
    await this.noteLoginWaits(decision.waiting, queued, byKey, decision.claim);
    if (failed > 0) throw new Error(`${failed} claim(s) failed`);
    // Looked at again when the earliest hold ends (its Runs go then), or soon for a Pod still going away.
    const after = Math.min(retryForeign ? FOREIGN_POD_RETRY_MS : Infinity, admission?.requeueAfterMs ?? Infinity, backoffLeftMs);
    return after === Infinity ? undefined : { requeueAfterMs: after };
  }

  /**
   * Adaptive admission (claims/throttle-admission.ts): marks the queued Runs whose provider+model the model gateway
   * reports throttled as held, so decideClaims skips them and the Runs behind them go. Undefined: nothing held.
   */
  private admit(byKey: ReadonlyMap<string, RunObject>, queued: QueuedRun[]): AdmissionDecision | undefined {
    const throttles = this.deps.throttles;
    if (!throttles) return undefined;
    const now = throttles.now();
    const holds = throttles.book.holds(now);
    if (this.admission.idle(holds)) return undefined;
    const { settings } = this.deps;
    const secretNames = new Set(this.deps.caches.secrets.list().map((s) => s.metadata!.name!));
    const pending: PendingRun[] = [...byKey].map(([key, r]) => ({ key, harness: String(r.spec.harness ?? ''), model: String(r.spec.model ?? ''), ...(typeof r.spec.authMode === 'string' ? { authMode: r.spec.authMode } : {}) }));
    // The provider the Run's key would reach: the key variable auth resolution picks, as claimOne will.
    const targetOf = (run: PendingRun) => {
      try {
        const manifest = manifestForModel(getHarness(run.harness), run.model);
        const resolution = clusterAvailability(manifest.auth, { harness: run.harness, authMode: authModeOf(run.authMode) }, settings, secretNames, settings.TCAB_DRIVER_ENV);
        if (resolution.available && resolution.mode !== 'api-key') return undefined; // a subscription: another quota
        return runTargetOf(manifest, run.model, resolution.available ? resolution.keyVar : undefined);
      } catch {
        return undefined; // an unknown harness: claimOne refuses it
      }
    };
    const decision = this.admission.decide(pending, holds, now, targetOf);
    for (const q of queued) if (decision.held.has(q.key)) q.held = true;
    return decision;
  }

  /** Held Runs' Throttled condition (written once per hold), the held-runs gauge, and the time to resume of the claimed. */
  private async noteAdmission(admission: AdmissionDecision | undefined, byKey: ReadonlyMap<string, RunObject>, claimed: readonly string[]): Promise<void> {
    const { metrics, throttles } = this.deps;
    if (!throttles) return;
    metrics.throttleHeldRuns.reset();
    if (!admission) return;
    for (const seconds of this.admission.claimed(claimed, throttles.now())) metrics.throttleHoldSeconds.observe(seconds);
    for (const hold of admission.held.values()) metrics.throttleHeldRuns.inc({ provider: hold.provider, model: hold.model ?? '*' });
    const started = new Set(claimed); // their claim releases them (transitions.ts)
    const writes: [string, boolean, string][] = [...[...admission.held].map(([key, hold]): [string, boolean, string] => [key, true, heldMessage(hold)]), ...admission.released.filter((k) => !started.has(k)).map((key): [string, boolean, string] => [key, false, RELEASED_MESSAGE])];
    await concurrently(writes, CLAIM_CONCURRENCY, async ([key, held, message]) => {
      const run = byKey.get(key);
      if (!run) return;
      // A conflict or an error is retried by the next pass: the condition says why the Run waits, nothing depends on it.
      await this.deps.write(run, { kind: 'throttled', held, message, at: at() }).catch((error: unknown) => this.deps.log.debug({ run: key, err: errorMessage(error) }, 'writing the Throttled condition failed'));
    });
  }

  /** LoginBusy on the Runs that wait for a serialised login (claims/serialized-login.ts), False once it is free. */
  private async noteLoginWaits(waiting: Readonly<Record<string, string>>, queued: readonly QueuedRun[], byKey: ReadonlyMap<string, RunObject>, claimed: readonly string[]): Promise<void> {
    const loginOf = new Map(queued.map((q) => [q.key, q.login]));
    const busy = Object.keys(waiting).filter((key) => waiting[key] === 'login-busy' && byKey.has(key));
    const writes: [string, boolean, string][] = busy
      .filter((key) => !this.loginWaiting.has(key))
      .map((key) => [key, true, `waiting for login ${loginOf.get(key) ?? '?'}: another Run is using it, and its refresh token rotates on use, so its Runs go one at a time`]);
    const started = new Set(claimed); // their claim releases them (transitions.ts)
    for (const key of this.loginWaiting) if (!busy.includes(key) && !started.has(key) && byKey.has(key)) writes.push([key, false, 'the login is free']);
    for (const key of [...this.loginWaiting]) if (!busy.includes(key)) this.loginWaiting.delete(key);
    await concurrently(writes, CLAIM_CONCURRENCY, async ([key, waits, message]) => {
      const run = byKey.get(key);
      if (!run) return;
      try {
        await this.deps.write(run, { kind: 'login-busy', waiting: waits, message, at: at() });
        if (waits) this.loginWaiting.add(key);
      } catch (error) {
        // Retried by the next pass (not marked): the condition says why the Run waits, nothing depends on it.
        this.deps.log.debug({ run: key, err: errorMessage(error) }, 'writing the LoginBusy condition failed');
      }
    });
  }

  private async claimOne(run: RunObject): Promise<'claimed' | 'refused' | 'foreign'> {
    const refuse = async (reason: string) => {
      await this.deps.write(run, { kind: 'unavailable', reason, at: at() });
      return 'refused' as const;
    };
    const parsed = RunSpec.safeParse(run.spec);
    if (!parsed.success) return refuse(`invalid run spec: ${formatIssues(parsed.error)}`);
    const spec = parsed.data;
    // The next attempt: the first, or the one after an attempt that failed on infrastructure (status/retry.ts).
    const ref = { ...runRef(run), attempt: nextAttemptNumber(this.deps.statusOf(run)) };
    if (clusterRunIdOf(ref.namespace, ref.name) === undefined) return refuse(`invalid metadata.name: ${clusterRunIdProblem(ref)}`);
    let manifest;
    try {
      manifest = manifestForModel(getHarness(spec.harness), spec.model);
    } catch {
      return refuse(`unknown harness "${spec.harness}"`);
    }
    // A protocol the harness does not speak (or ACP with several sessions) is refused here, naming the field.
    try {
      runProtocol(spec, manifest);
    } catch (error) {
      return refuse(`invalid ${(error as Error).message}`);
    }
    const { auth } = manifest;
    const secretNames = new Set(this.deps.caches.secrets.list().map((s) => s.metadata!.name!));
    const availability = clusterAvailability(auth, spec, this.deps.settings, secretNames, this.deps.settings.TCAB_DRIVER_ENV);
    if (!availability.available) return refuse(availability.reason);
    const gateway = planGateway({ manifest, resolution: availability, apiKeySecrets: this.deps.settings.TCAB_API_KEY_SECRETS, gatewayConfigured: this.deps.gatewayTokens !== undefined && this.deps.settings.TCAB_GATEWAY_URL !== undefined });
    const egressConfig = this.deps.settings.TCAB_EGRESS;
    const installHosts = egressConfig ? installHostsOf(manifest.install, this.deps.settings.TCAB_DRIVER_ENV.TCAB_NPM_REGISTRY ?? DEFAULT_NPM_REGISTRY, egressConfig.noProxy) : [];
    const egress = decideEgress(spec, egressConfig, installHosts);
    if (!egress.ok) return refuse(egress.reason);
    // Before this Run's Pod exists nothing of this Run is on its subjects: what is there is an earlier Run's of the
    // same name (deleted while no dispatcher led, or its driver's last words after the deletion's purge). Purged
    // here, at the claim, so the new Run's stream is its own. Its message ids carry its uid (TCAB_RUN_ATTEMPT), so
    // within the stream's duplicate window they are not dropped as repeats of the old Run's either.
    // A later attempt of the same Run keeps what its earlier attempts published: their events and results stay.
    const existing = this.deps.caches.pods.get(driverPodName(ref), ref.namespace);
    if (ref.attempt === 1 && (!existing || !ownedBy(existing, ref.uid))) await this.deps.forgetRun(run, 'claimed again');
    const made = await this.createPod(run, ref, spec, apiKeySources(spec.harness, auth), egress.plan, gateway);
    if (made === 'foreign') return 'foreign'; // a Pod of an earlier Run of the same name is still going away
    this.deps.memory.entry(objectKey(run), ref.uid).claimed = { pod: driverPodName(ref), eventsSubject: eventsSubject(ref), ...(egress.plan ? { egress: egress.plan.egress } : {}), at: at() };
    this.deps.metrics.claims.inc({ harness: spec.harness });
    return 'claimed';
  }

  /** Creates the Run's driver Pod. 'exists' = already made (by this or a previous leader): one Pod per Run. */
  private async createPod(run: RunObject, ref: RunRef, spec: RunSpec, keyVars: readonly string[], egress: RunEgressPlan | undefined, gatewayPlan: GatewayPlan): Promise<'created' | 'exists' | 'foreign'> {
    const { settings } = this.deps;
    // The key's way (pods/gateway-plan.ts): through the gateway, or (no gateway, subscription auth, a manifest
    // that keeps its key) by secretKeyRef as before.
    const route = 'gateway' in gatewayPlan && this.deps.gatewayTokens && settings.TCAB_GATEWAY_URL ? { ...gatewayPlan.gateway, url: settings.TCAB_GATEWAY_URL, issuer: this.deps.gatewayTokens } : undefined;
    if (!route && settings.TCAB_GATEWAY_URL && 'keyInHarness' in gatewayPlan) this.deps.log.debug({ run: objectKey(run), why: gatewayPlan.keyInHarness }, 'the run\'s key does not go through the gateway');
    // Before the credentials: a name that does not resolve fails the claim, which is retried, and mints nothing.
    const hostAliases = settings.TCAB_DRIVER_DNS === 'hosts' ? hostAliasesOf(await this.hosts.resolve(namesToResolve(settings.TCAB_DRIVER_NATS_URL ?? settings.TCAB_NATS_URL, settings.TCAB_DRIVER_ENV, egress, route ? [route.url] : []))) : undefined;
    const credential = await this.deps.credentials?.issue(objectKey(run), ref, runLifetimeSeconds(spec));
    const tokenSecret = route && (await route.issuer.issue(objectKey(run), ref, spec, route.provider));
    const gateway = route && tokenSecret ? { tokenSecret, url: route.url, provider: route.provider, keyVar: route.keyVar } : undefined;
    const pod = labelNatsUser(buildDriverPod(ref, spec, settings, keyVars, { natsCredsSecret: credential?.secret, egress, hostAliases, gateway }), credential);
    try {
      await this.deps.core.createNamespacedPod({ namespace: ref.namespace, body: pod });
      this.deps.metrics.podWrites.inc();
      return 'created';
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      // Gone again since the 409 (an old Pod finishing its deletion): 'foreign', so the claim is tried later.
      const existing = await this.deps.core.readNamespacedPod({ namespace: ref.namespace, name: pod.metadata!.name! }).catch((readError: unknown) => {
        if (isNotFound(readError)) return undefined;
        throw readError;
      });
      return existing && ownedBy(existing, ref.uid) ? 'exists' : 'foreign';
    }
  }
}

/** A Run's raw spec.authMode as the auth resolver takes it: one of the modes, else none (the claim refuses the spec). */
function authModeOf(raw: string | undefined): RunSpec['authMode'] {
  return AUTH_MODE_SETTINGS.find((mode) => mode === raw);
}
