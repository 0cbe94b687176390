// One side of the gateway benchmark (bench/gateway.ts) in a process of its own, so each gets one core's worth of
// event loop and its CPU time is its own: `stub` runs the stub model server, `gateway <upstream>` the model gateway
// in front of it (every provider pointed there) with one minted token. IPC: the child sends
// { type: 'ready', url, token? }; the parent sends { type: 'cpu' } (answered { type: 'cpu', user_ms, system_ms }),
// { type: 'metrics' } (answered { type: 'metrics', value: the registry as JSON }) and { type: 'stop' }.
import { startStubModelServer } from '../driver/stub-models/index.ts';
import { startGateway } from '../gateway/server.ts';
import { providerConfigs } from '../gateway/providers.ts';
import { createLogger } from '../shared/log.ts';

const [role, upstream] = process.argv.slice(2);
const send = (message: object) => process.send!(message);
let close: () => Promise<void>;
let metrics: () => Promise<unknown> = () => Promise.resolve(null);

if (role === 'stub') {
  const stub = await startStubModelServer({ script: { steps: [{ text: 'Hello from the stub model.' }] } });
  close = () => stub.close();
  send({ type: 'ready', url: stub.url });
} else if (role === 'gateway' && upstream) {
  const at = { upstream };
  const gateway = await startGateway({
    providers: providerConfigs({ anthropic: at, openai: at, google: at, openrouter: at, dashscope: at }),
    keys: { anthropic: 'sk-ant-fake-bench-key', openai: 'sk-fake-bench-key', google: 'fake-bench-key' },
    signingKey: Buffer.alloc(32, 0x42),
    log: createLogger({ component: 'gateway-bench', level: 'warn' }),
  });
  close = () => gateway.close();
  metrics = () => gateway.metrics.getMetricsAsJSON();
  send({ type: 'ready', url: gateway.url, token: gateway.mint('bench-run', 'bench-attempt', 3600) });
} else {
  throw new Error('usage: gateway-child.ts stub | gateway <upstream-url>');
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') {
    const cpu = process.cpuUsage();
    send({ type: 'cpu', user_ms: cpu.user / 1000, system_ms: cpu.system / 1000 });
  } else if (message.type === 'metrics') {
    void metrics().then((value) => send({ type: 'metrics', value }));
  } else if (message.type === 'stop') {
    void close().then(() => process.exit(0));
  }
});
