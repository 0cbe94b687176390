// The console's browser test bench on the test cluster: a real dispatcher (this process) serving its HTTP API with
// the console mounted on it as dispatcher/main.ts does (console-api.ts), a real nats-server, gg driver Pods on the real node
// answering a stub model, and a gate (test/support/gate.ts) that holds each run's one command until the test opens
// it, so a run stays mid-session for as long as the test looks at it.
import { join } from 'node:path';
import { expect } from 'vitest';
import { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import { dispatcherMetrics } from '../../dispatcher/controller/metrics.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { natsSettings } from '../../nats/settings.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { createLogger } from '../../shared/log.ts';
import { NatsServer } from '../support/nats-server.ts';
import { startGate } from '../support/gate.ts';
import type { Gate } from '../support/gate.ts';
import { podUrl } from './real-node-context.ts';
import { clusterConfig, createNamespace, kubectl } from './support.ts';
import { serveDispatcherApi } from './console-api.ts';
import { ggDriverEnv } from './gg-driver-env.ts';

export const TOKEN = 'fake-console-api-token-3b9f';
export const READ_TOKEN = 'fake-console-read-token-7c21';
export const REASONING = 'First I wait for the gate; then I report back.';

export interface ConsoleBench {
  ns: string;
  /** The dispatcher's API (and console) on the host's loopback. */
  url: string;
  /** The API served anew on the same port (a replica restart): pages must resume their streams. */
  restartApi(): Promise<void>;
  /** Replaces the read token (a rotated Secret): sessions made with the old one end, open streams within 1 s. */
  rotateReadToken(next: string): void;
  nats: NatsServer;
  gate: Gate;
  logs: string[];
  /** kubectl apply of gg Runs (one List, so they are created in this order). */
  apply(...names: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleBench(): Promise<ConsoleBench> {
  const stops: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const { name: ns, remove } = await createNamespace('console');
    stops.push(remove);
    expect((await kubectl(['apply', '-f', join(import.meta.dirname, '..', '..', 'deploy', 'crds')])).code).toBe(0);
    await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', '--timeout=30s']);
    // HarnessConfigs are cluster-wide: this file owns gg's while it runs.
    await kubectl(['delete', 'harnessconfig', 'gg', '--ignore-not-found']);
    stops.push(() => kubectl(['delete', 'harnessconfig', 'gg', '--ignore-not-found']));
    const nats = await NatsServer.start();
    stops.push(() => nats.dispose());
    const gate = await startGate();
    stops.push(() => gate.close());
    // The model thinks (a reasoning event), runs one command that waits at the gate, then answers.
    const gateInPods = await podUrl(gate.url);
    const stub: StubModelServer = await startStubModelServer({
      script: {
        steps: [
          { thinking: REASONING, text: 'Waiting for the gate.', tool: { name: 'shell', args: { command: `node -e "fetch('${gateInPods}/').then((r) => r.text()).then((t) => console.log('gate', t.trim()))"` } } },
          { text: 'All done.' },
        ],
      },
    });
    stops.push(() => stub.close());
    await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, '--from-literal=anthropic=sk-ant-fake-console-0000']);

    const logs: string[] = [];
    const settings = dispatcherConfig({
      ...(await ggDriverEnv({ namespace: ns, natsUrl: nats.url, stubUrl: stub.url })),
    });
    const stream = await RunStream.connect(natsSettings(nats.url));
    stops.push(() => stream.close());
    const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
    const metrics = dispatcherMetrics();
    const dispatcher = new Dispatcher({ config: clusterConfig(), settings: { ...settings, TCAB_RESULT_GRACE_SECONDS: 5 }, events: stream, metrics, log });
    await dispatcher.start();
    stops.push(() => dispatcher.stop());
    dispatcher.setLeading(true); // the only replica: no election needed
    await stream.consumeResults((runId, result, ack) => dispatcher.onResult(runId, result, ack), (m) => logs.push(m));

    let readToken = READ_TOKEN;
    const api = await serveDispatcherApi({ dispatcher, settings, natsUrl: nats.url, token: TOKEN, readToken: () => readToken, heartbeatMs: 1000 });
    stops.push(() => api.stop());

    return {
      ns,
      url: api.url,
      restartApi: () => api.restart(),
      rotateReadToken: (next) => void (readToken = next),
      nats,
      gate,
      logs,
      async apply(...names) {
        const items = names.map((name) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: `console test ${name}`, maxRuntimeSeconds: 300 } }));
        const out = await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
        expect(out.code, out.stderr).toBe(0);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
