// Faults a test injects into one real node of a multi-node cluster (issue 35, part 4), on the node's real parts:
//   sigkillContainer  SIGKILLs the processes of one Pod's containers from the host (what the OOM killer or a crash
//                     does: no SIGTERM, no grace); the kubelet sees the container die and restarts it
//   registryOutage    the node's image registry answers 503 (flaky-registry.ts in the node's network namespace,
//                     named to containerd by the node's own hosts.toml), and an image removed from the node's
//                     containerd so that its next Pod must pull it; `restore()` puts the registry back, `close()`
//                     stops the proxy
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REGISTRY, internals } from './real-node.ts';
import type { RealNode } from './real-node.ts';

/**
 * SIGKILLs every process of the containers of Pod `podUid` on `node` (not the sandbox's pause process) whose command
 * line contains `commandIncludes`. Returns the pids killed (none: the Pod's container is not running on this node).
 */
export function sigkillContainer(node: RealNode, podUid: string, commandIncludes: string): number[] {
  // cgroupfs layout: <cgroupRoot>/kubepods/<qos>/pod<uid>/<container id>.
  const dirs = internals.cgroupTree('/sys/fs/cgroup/pids', node.cgroupRoot).filter((dir) => dir.includes(`/pod${podUid}/`));
  const pids = dirs.flatMap((dir) => readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number));
  const command = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      return '';
    }
  };
  const victims = pids.filter((pid) => command(pid).includes(commandIncludes));
  for (const pid of victims) process.kill(pid, 'SIGKILL');
  return victims;
}

export interface RegistryOutage {
  /** Every request the node's containerd made while the outage proxy stood in (JSON lines: at, method, url, status). */
  requests(): { at: string; method: string; url: string; status: number }[];
  /** The registry answers again: the proxy forwards (pulls under way go on through it), the node's hosts.toml is put back. */
  restore(): Promise<void>;
  /** Stops the proxy (after restore: no pull goes through it any more). */
  close(): Promise<void>;
}

/**
 * From now until `restore()`, every pull on `node` meets a registry answering 503; `image` (a ref as Pods name it)
 * is removed from the node's containerd (all its names, so the kubelet finds it absent), so the node's next Pod of
 * it pulls. Running containers keep their snapshots.
 */
export async function registryOutage(node: RealNode, nodeBinDir: string, image: string): Promise<RegistryOutage> {
  const [command, ...args] = node.nodeArgv([process.execPath, join(import.meta.dirname, '..', 'flaky-registry.ts'), '--listen', '127.0.0.1:0', '--to', node.registryInNode]);
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { test: (line: string) => boolean; resolve: () => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (w.test(line)) w.resolve();
      else waiters.push(w);
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const line = (test: (line: string) => boolean, what: string) => new Promise<void>((resolve, reject) => {
    if (lines.some(test)) return resolve();
    const timer = setTimeout(() => reject(new Error(`registry outage proxy: no ${what} in 20 s: ${lines.join('\n')} ${stderr}`)), 20_000);
    waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
  });
  await line((l) => l.startsWith('listening '), 'listening line');
  const port = Number(lines.find((l) => l.startsWith('listening '))!.split(':').at(-1));
  const hostsFile = join(node.dir, 'containerd', 'certs.d', REGISTRY, 'hosts.toml');
  const original = readFileSync(hostsFile, 'utf8');
  const proxy = `http://127.0.0.1:${port}`;
  // containerd reads hosts.toml at each pull: from the next pull on, the registry is the proxy.
  writeFileSync(hostsFile, `server = "${proxy}"\n\n[host."${proxy}"]\n  capabilities = ["pull", "resolve"]\n`);

  const ctr = (...args: string[]) => execFileSync(join(nodeBinDir, 'ctr'), ['--address', join(node.dir, 'containerd', 'containerd.sock'), '--namespace', 'k8s.io', ...args], { encoding: 'utf8' });
  // `ctr images ls`: REF TYPE DIGEST ...; the CRI keeps the tag, the digest and the image id as names of one image.
  const listed = ctr('images', 'ls').split('\n').slice(1).filter(Boolean).map((row) => row.split(/\s+/));
  const digest = listed.find(([ref]) => ref === image)?.[2];
  if (!digest) throw new Error(`registry outage: ${image} is not on node ${node.name} (${listed.map(([ref]) => ref).join(', ')})`);
  const refs = listed.filter((row) => row[2] === digest).map(([ref]) => ref!);
  ctr('images', 'rm', ...refs);

  return {
    requests: () => lines.filter((l) => l.startsWith('{') && l.includes('"status"')).map((l) => JSON.parse(l) as ReturnType<RegistryOutage['requests']>[number]),
    async restore() {
      const before = lines.length;
      child.stdin!.write('up\n');
      await line((l) => lines.indexOf(l) >= before && l.includes('"state":"up"'), 'acknowledgement of up');
      writeFileSync(hostsFile, original);
    },
    async close() {
      child.stdin!.end();
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    },
  };
}
