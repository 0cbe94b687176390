// A Dispatcher in this process against the test control plane and the real node, as the dispatcher tests that
// watch one Run's life need it: its own namespace with the CRDs, a real nats-server, the stub model (one shell
// call, then a reply), a fake provider key, gg driver Pods, the only replica (leading), its results consumer and
// progress subscription on.
import { join } from 'node:path';
import { expect } from 'vitest';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { natsSettings } from '../../nats/settings.ts';
import { createLogger } from '../../shared/log.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import { dispatcherMetrics } from '../../dispatcher/controller/metrics.ts';
import type { DispatcherMetrics } from '../../dispatcher/controller/metrics.ts';
import { NatsServer } from '../support/nats-server.ts';
import { clusterConfig, createNamespace, kubectl } from './support.ts';
import { ggDriverEnv } from './gg-driver-env.ts';

export interface DispatcherFixture {
  ns: string;
  nats: NatsServer;
  stub: StubModelServer;
  stream: RunStream;
  dispatcher: Dispatcher;
  metrics: DispatcherMetrics;
  /** The dispatcher's log lines (debug) and the results consumer's notes: for failure messages. */
  logs: string[];
  /** Stops the dispatcher, closes NATS and the stub, removes the namespace. */
  stop(): Promise<void>;
}

/** @param name the namespace's prefix, also in the fake key (`sk-ant-fake-<name>`). */
export async function startDispatcherFixture(name: string): Promise<DispatcherFixture> {
  const { name: ns, remove } = await createNamespace(name);
  expect((await kubectl(['apply', '-f', join(import.meta.dirname, '..', '..', 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  const nats = await NatsServer.start();
  const stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'echo hi' } } }, { text: 'All done.' }] } });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, `--from-literal=anthropic=sk-ant-fake-${name}`]);
  const settings = dispatcherConfig({
    ...(await ggDriverEnv({ namespace: ns, natsUrl: nats.url, stubUrl: stub.url })),
    // The grace after the driver's exit before a Run without a result fails NoResult (30 s in the chart).
    TCAB_RESULT_GRACE_SECONDS: '15',
  });
  const stream = await RunStream.connect(natsSettings(nats.url));
  const metrics = dispatcherMetrics();
  const logs: string[] = [];
  const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
  const dispatcher = new Dispatcher({ config: clusterConfig(), settings, events: stream, metrics, log });
  await dispatcher.start();
  dispatcher.setLeading(true); // the only replica: no election needed
  await stream.consumeResults((runId, result, ack) => dispatcher.onResult(runId, result, ack), (m) => logs.push(m));
  stream.followProgress((runId, progress) => dispatcher.onProgress(runId, progress), (m) => logs.push(m));
  return {
    ns,
    nats,
    stub,
    stream,
    dispatcher,
    metrics,
    logs,
    async stop() {
      await dispatcher.stop();
      await stream.close();
      await stub.close();
      await nats.dispose();
      await remove();
    },
  };
}
