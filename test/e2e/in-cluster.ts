// Reaching into the real node from the test process, the way an operator would with kubectl, for what the
// node cannot do through the apiserver yet (kubectl port-forward / exec / logs need the apiserver to reach the
// kubelet, which the test control plane does not do): a Service port forwarded to the host's loopback, a command
// run in a container's own namespaces, and every container log of a namespace captured before its Pod goes.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { kubectl, runCaptured } from '../cluster/support.ts';
import { freePort } from '../support/nats-server.ts';
import type { RealNodeContext } from '../cluster/real-node-context.ts';

const BRIDGE = join(import.meta.dirname, '..', 'cluster', 'node', 'socket-bridge.ts');

function started(child: ChildProcess, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('bridging')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`${what} exited ${code}: ${stderr}`)));
  });
}

/**
 * A Service port on the host's 127.0.0.1, as `kubectl port-forward svc/<name> <port>` gives: to one ready endpoint
 * of the Service (port-forward picks a Pod too; the node's own network namespace has no route to ClusterIPs, only
 * Pods do). A socket bridge inside the node's namespace dials the endpoint, another listens on the host's
 * loopback; a Unix socket joins them.
 */
export async function forwardService(node: RealNodeContext, namespace: string, service: string, port: number): Promise<{ address: string; close: () => void }> {
  const svc = JSON.parse((await kubectl(['get', 'service', service, '-n', namespace, '-o', 'json'])).stdout) as { spec: { ports: { name?: string; port: number }[] } };
  const portName = svc.spec.ports.find((p) => p.port === port)?.name;
  const slices = JSON.parse((await kubectl(['get', 'endpointslices', '-n', namespace, '-l', `kubernetes.io/service-name=${service}`, '-o', 'json'])).stdout) as {
    items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[]; ports?: { name?: string; port?: number }[] }[];
  };
  const slice = slices.items.find((s) => s.endpoints?.some((e) => e.conditions?.ready));
  const ip = slice?.endpoints?.find((e) => e.conditions?.ready)?.addresses[0];
  const target = slice?.ports?.find((p) => (p.name ?? '') === (portName ?? ''))?.port;
  if (!ip || !target) throw new Error(`service ${namespace}/${service} has no ready endpoint for port ${port}: ${JSON.stringify(slices.items)}`);
  const dir = mkdtempSync(join(tmpdir(), 'tcab-e2e-forward-'));
  const socket = join(dir, 'forward.sock');
  const local = await freePort();
  const inNode = spawn('nsenter', [`--net=${node.netnsPath}`, '--', process.execPath, BRIDGE, '--listen', `unix:${socket}`, '--to', `tcp:${ip}:${target}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const onHost = spawn(process.execPath, [BRIDGE, '--listen', `tcp:127.0.0.1:${local}`, '--to', `unix:${socket}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const close = () => {
    inNode.kill('SIGTERM');
    onHost.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all([started(inNode, 'the node side of the forward'), started(onHost, 'the host side of the forward')]);
  } catch (error) {
    close();
    throw error;
  }
  return { address: `127.0.0.1:${local}`, close };
}

/** The host PID of a running container's first process, found in the node's cgroups (cgroupfs driver). */
export function containerPid(node: RealNodeContext, pod: V1Pod, container: string): number {
  const id = pod.status?.containerStatuses?.find((c) => c.name === container)?.containerID?.replace(/^containerd:\/\//, '');
  if (!id) throw new Error(`pod ${pod.metadata?.name} has no running container ${container}`);
  const find = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name === id) return path;
      const found = find(path);
      if (found) return found;
    }
    return undefined;
  };
  const root = join('/sys/fs/cgroup/pids', node.cgroupRoot);
  const cgroup = existsSync(root) ? find(root) : undefined;
  if (!cgroup) throw new Error(`no cgroup for container ${id} under ${root}`);
  const pids = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  if (pids.length === 0) throw new Error(`container ${id} has no process`);
  return Math.min(...pids);
}

/**
 * Runs a shell script in a container's mount and PID namespaces as uid/gid 1000 (what `kubectl exec` does, less
 * the container's own capability and seccomp set: read those from /proc/1/status, the container's process).
 */
export async function inContainer(node: RealNodeContext, pod: V1Pod, container: string, script: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const pid = containerPid(node, pod, container);
  return runCaptured('nsenter', [`--target=${pid}`, '--mount', '--pid', '--setuid=1000', '--setgid=1000', '--', '/bin/sh', '-c', script]);
}

/**
 * Every container log of a namespace (the kubelet's CRI log files, which `kubectl logs` serves), kept open from the
 * moment it appears: a driver Pod's log is gone once the dispatcher deletes the Pod, an open file is not.
 */
export class LogCapture {
  private readonly files = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly namespace: string;
  private readonly dir: string;
  constructor(namespace: string, dir = '/var/log/containers') {
    this.namespace = namespace;
    this.dir = dir;
    // Sampling the directory, not waiting on it: nothing here is synchronised by the interval.
    this.timer = setInterval(() => this.scan(), 50);
    this.scan();
  }

  private scan(): void {
    if (!existsSync(this.dir)) return;
    for (const entry of readdirSync(this.dir)) {
      // <pod>_<namespace>_<container>-<container id>.log
      if (this.files.has(entry) || entry.split('_')[1] !== this.namespace) continue;
      try {
        this.files.set(entry, openSync(realpathSync(join(this.dir, entry)), 'r'));
      } catch {
        // removed between the listing and the open
      }
    }
  }

  /** Every log so far, by file name (`<pod>_<namespace>_<container>-<id>.log`). */
  logs(): Record<string, string> {
    this.scan();
    const whole = (fd: number) => {
      const buffer = Buffer.alloc(fstatSync(fd).size);
      let at = 0;
      while (at < buffer.length) {
        const n = readSync(fd, buffer, at, buffer.length - at, at);
        if (n === 0) break;
        at += n;
      }
      return buffer.subarray(0, at).toString('utf8');
    };
    return Object.fromEntries([...this.files].map(([name, fd]) => [name, whole(fd)]));
  }

  close(): void {
    clearInterval(this.timer);
    for (const fd of this.files.values()) closeSync(fd);
    this.files.clear();
  }
}
