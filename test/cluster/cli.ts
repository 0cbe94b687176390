// `npm run cluster:up` / `npm run cluster:down`: the local test cluster (local-cluster.ts: the control plane and
// its real nodes, TCAB_TEST_NODES of them, the images pushed) for hands-on work, outliving this command. `up` starts a detached holder
// process (`cli.ts serve`) that owns the cluster: the node's processes die with it, and a node whose owner died is
// swept by the next start. State (the holder's pid, kubeconfig, paths) lives in $TCAB_TEST_CLUSTER_DIR (default
// /tmp/tcab-test-cluster); `down` stops the holder, which takes the node and the plane down.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from './local-cluster.ts';
import { sweepStaleNodes } from './node/real-node.ts';
import { pollUntil } from '../support/poll.ts';
import type { RealNodeContext } from './real-node-context.ts';

const dir = process.env.TCAB_TEST_CLUSTER_DIR || join(tmpdir(), 'tcab-test-cluster');
const stateFile = join(dir, 'state.json');
interface State {
  pid: number;
  kubeconfig: string;
  binDir: string;
  nodeBinDir: string;
  realNode: RealNodeContext;
  timings: Record<string, unknown>;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const readState = () => (existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as State) : undefined);
const print = (state: State) => {
  console.log(`test cluster up (real node ${state.realNode.name}; images ${state.realNode.registry}/...): ${JSON.stringify(state.timings)}`);
  console.log(`export KUBECONFIG=${state.kubeconfig} PATH=${state.binDir}:${state.nodeBinDir}:$PATH`);
};

async function stop(): Promise<void> {
  const state = readState();
  if (state && alive(state.pid)) {
    process.kill(state.pid, 'SIGTERM');
    // A minute for it to stop its node and control plane; then it is killed.
    await pollUntil('the test cluster\'s holder to exit', () => !alive(state.pid), { timeoutMs: 60_000 }).catch(() => undefined);
    if (alive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  // A holder killed outright leaves its node's containers and namespace: swept here (and by any later start).
  const swept = sweepStaleNodes();
  rmSync(dir, { recursive: true, force: true });
  console.log(state ? `test cluster stopped; ${dir} removed${swept.length ? ` (swept ${swept.join(', ')})` : ''}` : 'no test cluster running');
}

const command = process.argv[2];
if (command === 'up') {
  const running = readState();
  if (running && alive(running.pid)) {
    print(running);
    process.exit(0);
  }
  if (existsSync(dir)) await stop();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = openSync(join(dir, 'holder.log'), 'a');
  const holder = spawn(process.execPath, [import.meta.filename, 'serve'], { detached: true, stdio: ['ignore', log, log, 'ipc'] });
  const [message] = (await Promise.race([once(holder, 'message'), once(holder, 'exit').then(([code]) => [{ failed: code }])])) as [State | { failed: unknown }];
  if ('failed' in message) {
    console.error(`test cluster failed to start (exit ${String(message.failed)}); see ${join(dir, 'holder.log')}`);
    process.exit(1);
  }
  holder.disconnect();
  holder.unref();
  print(message);
  process.exit(0);
} else if (command === 'serve') {
  const cluster = await startLocalCluster(join(dir, 'cluster'));
  const state: State = { pid: process.pid, kubeconfig: cluster.plane.kubeconfig, binDir: cluster.plane.binDir, nodeBinDir: cluster.nodeBinDir, realNode: cluster.context, timings: cluster.timings };
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await cluster.down();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  process.send?.(state);
  // Lives until SIGTERM (cluster:down).
  setInterval(() => undefined, 1 << 30);
} else if (command === 'down') {
  await stop();
} else {
  console.error('usage: node test/cluster/cli.ts up|down');
  process.exit(2);
}
