// `npm run cluster:up` / `npm run cluster:down`: the test control plane for hands-on work, outliving this
// command. State (pids, kubeconfig) lives in $TCAB_TEST_CLUSTER_DIR (default /tmp/tcab-test-cluster).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { up } from './control-plane.ts';

const dir = process.env.TCAB_TEST_CLUSTER_DIR || join(tmpdir(), 'tcab-test-cluster');
const stateFile = join(dir, 'state.json');
interface State {
  pids: number[];
  kubeconfig: string;
  server: string;
  binDir: string;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function stop(): Promise<void> {
  if (!existsSync(stateFile)) {
    rmSync(dir, { recursive: true, force: true });
    console.log('no test cluster running');
    return;
  }
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as State;
  // Reverse start order: the kubelet stops its pods first, etcd goes last.
  for (const pid of [...state.pids].reverse()) {
    if (!alive(pid)) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`test cluster stopped; ${dir} removed`);
}

const command = process.argv[2];
if (command === 'up') {
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as State;
    if (state.pids.every(alive)) {
      console.log(`test cluster already running: KUBECONFIG=${state.kubeconfig}`);
      process.exit(0);
    }
    await stop();
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const plane = await up({ dir, dieWithParent: false });
  const state: State = { pids: plane.processes.map((p) => p.child.pid!), kubeconfig: plane.kubeconfig, server: plane.server, binDir: plane.binDir };
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  console.log(`test cluster up in ${(plane.timings.ready_ms! / 1000).toFixed(1)}s (${JSON.stringify(plane.timings)})`);
  console.log(`export KUBECONFIG=${plane.kubeconfig} PATH=${plane.binDir}:$PATH`);
  process.exit(0);
} else if (command === 'down') {
  await stop();
} else {
  console.error('usage: node test/cluster/cli.ts up|down');
  process.exit(2);
}
