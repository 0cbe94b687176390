// Leader election on a coordination.k8s.io Lease, as client-go's leaderelection does it: the holder renews
// renewTime every `retryMs`; a candidate takes the Lease once renewTime + leaseDurationSeconds has passed. Every
// write carries the Lease's resourceVersion, so of two candidates racing for an expired Lease exactly one wins.
// A round that does not finish within its renew deadline (2/3 of the lease, as client-go's RenewDeadline) counts as
// lost: a leader stuck on a hung request steps down before a candidate may take the expired Lease, and a candidate
// stuck on one tries again instead of waiting for the request to give up.
import pTimeout from 'p-timeout';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../shared/log.ts';
import { errorMessage, isAlreadyExists, isConflict, isNotFound } from './errors.ts';

export interface LeaderOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  retryMs: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log: Logger;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The acquire/renew round in flight, if any: stop() waits for it, so its write cannot land after the release. */
  private round: Promise<void> | undefined;
  private readonly options: LeaderOptions;

  constructor(config: KubeConfig, options: LeaderOptions) {
    this.api = config.makeApiClient(CoordinationV1Api);
    this.options = options;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const renewDeadlineMs = Math.max(this.options.retryMs, (this.options.leaseDurationSeconds * 1000 * 2) / 3);
    const loop = async () => {
      if (this.stopped) return;
      const round = pTimeout(this.tryAcquireOrRenew(), { milliseconds: renewDeadlineMs, message: `no answer from the apiserver within the renew deadline (${Math.round(renewDeadlineMs)} ms)` });
      const leading = await round.catch((error: unknown) => {
        this.options.log.warn({ err: errorMessage(error) }, 'leader election round failed');
        return false;
      });
      // Stopped meanwhile: a round that just (re)acquired must not start leading again; stop() releases it.
      if (this.stopped) return;
      this.setLeading(leading);
      this.timer = setTimeout(() => void (this.round = loop()), this.options.retryMs);
    };
    this.round = loop();
  }

  /**
   * Gives the Lease up (so a successor need not wait for it to expire) and stops. Waits for a round in flight
   * first: one that acquires as we stop would otherwise leave the Lease held by a process that is gone.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
    this.setLeading(false);
    const { namespace, name } = this.options;
    const lease = await this.api.readNamespacedLease({ name, namespace }).catch(() => undefined);
    if (lease?.spec?.holderIdentity !== this.options.identity) return;
    lease.spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new V1MicroTime(0) };
    await this.api.replaceNamespacedLease({ name, namespace, body: lease }).catch(() => undefined);
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.options.log.info({ identity: this.options.identity, lease: this.options.name }, leading ? `${this.options.identity} became the leader` : `${this.options.identity} lost the leadership`);
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationSeconds } = this.options;
    const now = new V1MicroTime();
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await this.api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 } } });
        return true;
      } catch (createError) {
        if (isAlreadyExists(createError)) return false;
        throw createError;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity;
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 < Date.now();
    if (holder && holder !== identity && !expired) return false;
    const taking = holder !== identity;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      ...(taking ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
    };
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
      return true;
    } catch (error) {
      if (isConflict(error)) return false; // someone else wrote first: they lead
      throw error;
    }
  }
}
