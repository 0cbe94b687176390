// The only writer of Run status. A write happens only when the observation changes the status, and carries the
// Run's resourceVersion as precondition: a 409 means the cache is behind (someone wrote first), so the caller
// re-reads and requeues, and nothing is ever forced; a 404 means the Run is gone, which ends the matter quietly.
// Each phase a Run enters is recorded once as a Kubernetes Event on it (`kubectl describe run` shows the history).
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { isConflict, isNotFound } from '../../kube/errors.ts';
import type { RunEventRecorder } from '../../kube/event-recorder.ts';
import { GROUP, RUNS, VERSION } from '../../kube/resources.ts';
import type { RunObject } from '../../kube/resources.ts';
import { isFinal, nextStatus } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { RunMemo, RunMemory } from './run-memory.ts';
import { currentVersion, objectKey, writtenStatus } from './run-view.ts';

export type WriteOutcome = 'written' | 'unchanged' | 'conflict' | 'gone';

export interface StatusWriterDeps {
  custom: CustomObjectsApi;
  metrics: DispatcherMetrics;
  recorder: RunEventRecorder;
  memory: RunMemory;
  /** The status that counts for the Run (run-view.ts effectiveStatus): the observation applies to it. */
  statusOf: (run: RunObject) => RunStatus;
  log: Logger;
}

export class StatusWriter {
  private readonly deps: StatusWriterDeps;

  constructor(deps: StatusWriterDeps) {
    this.deps = deps;
  }

  async write(run: RunObject, observation: Observation): Promise<WriteOutcome> {
    const { memory, metrics } = this.deps;
    const key = objectKey(run);
    const uid = run.metadata!.uid!;
    const before = writtenStatus(run, memory.peek(key, uid));
    const after = nextStatus(this.deps.statusOf(run), observation);
    if (JSON.stringify(after) === JSON.stringify(before)) return 'unchanged';
    const baseRv = run.metadata!.resourceVersion;
    // Only what a status write needs: the apiserver keeps everything but the status from the stored object
    // (the status subresource), so a slim cached Run is enough to write from.
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Run',
      metadata: { name: run.metadata!.name, namespace: run.metadata!.namespace, resourceVersion: currentVersion(run, memory.peek(key, uid)) },
      status: after,
    };
    let written: RunObject;
    try {
      written = (await this.deps.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: run.metadata!.namespace!, plural: RUNS, name: run.metadata!.name!, body })) as RunObject;
    } catch (error) {
      if (isConflict(error)) {
        metrics.conflicts.inc();
        this.deps.log.debug({ run: key, phase: after.phase }, 'status write refused (409): the cache is behind; re-reading');
        return 'conflict';
      }
      if (isNotFound(error)) return 'gone';
      throw error;
    }
    metrics.statusWrites.inc();
    const memo = memory.entry(key, uid);
    // Until the cache shows this write, reads of the Run see it (run-view.ts writtenStatus), so no write repeats.
    memo.lastWrite = { baseRv, rv: written.metadata?.resourceVersion, status: after };
    this.recordTransitions(run, memo, before, after);
    if (isFinal(after)) {
      metrics.outcomes.inc({ outcome: after.outcome ?? 'unknown' });
      this.deps.log.info({ run: key, phase: after.phase, outcome: after.outcome, reason: after.message }, 'run finished');
    }
    return 'written';
  }

  private recordTransitions(run: RunObject, memo: RunMemo, before: RunStatus, after: RunStatus): void {
    const entered = [...(after.dispatchedTime && !before.dispatchedTime ? ['Dispatched'] : []), ...(after.phase && after.phase !== 'Dispatched' && after.phase !== before.phase ? [after.phase] : [])];
    for (const phase of entered) {
      memo.recorded ??= [];
      if (memo.recorded.includes(phase)) continue;
      memo.recorded.push(phase);
      const message = phase === 'Dispatched' ? `driver pod ${after.pod} created` : phase === after.phase && after.message ? after.message : `run is ${phase}`;
      this.deps.recorder.record(run, phase, message, phase === 'Failed' ? 'Warning' : 'Normal');
    }
  }
}
