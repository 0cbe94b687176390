// The dispatcher's leadership, wired once: while this replica holds the lease it claims Runs and consumes results
// and the drivers' progress; when it loses the lease it stops all three. dispatcher/main.ts and the in-process cluster tests elect it the same way,
// so a test's dispatcher behaves as the deployed one does when leadership moves.
import type { KubeConfig } from '@kubernetes/client-node';
import type { RunStream } from '../nats/result-consumer.ts';
import type { Dispatcher } from './controller/dispatcher.ts';
import { errorMessage } from '../kube/errors.ts';
import { LeaderElector } from '../kube/leader.ts';
import type { LeaderOptions } from '../kube/leader.ts';

export interface LeadershipOptions extends Omit<LeaderOptions, 'onStartedLeading' | 'onStoppedLeading'> {
  dispatcher: Dispatcher;
  stream: RunStream;
}

/** Starts competing for the lease; the returned elector's stop() releases it. */
export function electDispatcher(config: KubeConfig, options: LeadershipOptions): LeaderElector {
  const { dispatcher, stream, ...lease } = options;
  const natsLog = options.log.child({ part: 'nats' });
  const elector = new LeaderElector(config, {
    ...lease,
    onStartedLeading: () => {
      dispatcher.setLeading(true);
      void stream.consumeResults((runId, result, ack) => dispatcher.onResult(runId, result, ack), (message) => natsLog.info(message)).catch((error: unknown) => natsLog.error({ err: errorMessage(error) }, 'results consumer failed'));
      stream.followProgress((runId, progress) => dispatcher.onProgress(runId, progress), (message) => natsLog.info(message));
    },
    onStoppedLeading: () => {
      dispatcher.setLeading(false);
      void stream.stopConsuming();
    },
  });
  elector.start();
  return elector;
}
