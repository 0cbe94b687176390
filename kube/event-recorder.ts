// Kubernetes Events on Runs (`kubectl describe run` shows each transition). Events are history, not state: like
// client-go's recorder they go out asynchronously, a few at a time, behind the writes that move Runs forward,
// and a burst beyond the queue's bound is dropped and counted rather than allowed to slow claims down.
import PQueue from 'p-queue';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Counter } from 'prom-client';
import type { Logger } from '../shared/log.ts';
import { errorMessage } from './errors.ts';
import { GROUP, VERSION } from './resources.ts';
import type { RunObject } from './resources.ts';

export const EVENTS_IN_FLIGHT = 4;
export const EVENTS_QUEUED_MAX = 5000;

export class RunEventRecorder {
  private readonly queue = new PQueue({ concurrency: EVENTS_IN_FLIGHT });
  private readonly core: CoreV1Api;
  private readonly dropped: Counter;
  private readonly log: Logger;

  constructor(core: CoreV1Api, dropped: Counter, log: Logger) {
    this.core = core;
    this.dropped = dropped;
    this.log = log;
  }

  record(run: RunObject, reason: string, message: string, type: 'Normal' | 'Warning'): void {
    if (this.queue.size >= EVENTS_QUEUED_MAX) {
      this.dropped.inc();
      return;
    }
    const { name, namespace, uid } = run.metadata!;
    const now = new Date();
    void this.queue.add(() =>
      this.core
        .createNamespacedEvent({
          namespace: namespace!,
          body: {
            metadata: { generateName: `${name}.`, namespace },
            involvedObject: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Run', name, namespace, uid },
            reason,
            message,
            type,
            source: { component: 'tcab-dispatcher' },
            reportingComponent: 'tcab-dispatcher',
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        })
        .catch((error: unknown) => this.log.warn({ run: `${namespace}/${name}`, reason, err: errorMessage(error) }, 'recording an Event on the Run failed')),
    );
  }

  /** Resolves when every queued Event has been sent (tests and shutdown). */
  drained(): Promise<void> {
    return this.queue.onIdle();
  }
}
