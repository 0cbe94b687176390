// Faults a test injects into one real node of a multi-node cluster (issue 35, part 4), on the node's real parts:
//   sigkillContainer  SIGKILLs the processes of one Pod's containers from the host (what the OOM killer or a crash
//                     does: no SIGTERM, no grace); the kubelet sees the container die and restarts it
//   registryOutage    the node's image registry answers 503 (flaky-registry.ts in the node's network namespace,
//                     named to containerd by the node's own hosts.toml), and an image removed from the node's
//                     containerd so that its next Pod must pull it; `restore()` puts the registry back, `close()`
//                     stops the proxy
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFlakyRegistry } from '../flaky-registry-process.ts';
import type { FlakyRegistryRequest } from '../flaky-registry-process.ts';
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
  /** Every request the node's containerd made while the outage proxy stood in. */
  requests(): FlakyRegistryRequest[];
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
  const proxy = await startFlakyRegistry((argv) => node.nodeArgv(argv), node.registryInNode);
  const hostsFile = join(node.dir, 'containerd', 'certs.d', REGISTRY, 'hosts.toml');
  const original = readFileSync(hostsFile, 'utf8');
  const url = `http://127.0.0.1:${proxy.port}`;
  try {
    // containerd reads hosts.toml at each pull: from the next pull on, the registry is the proxy.
    writeFileSync(hostsFile, `server = "${url}"\n\n[host."${url}"]\n  capabilities = ["pull", "resolve"]\n`);
    const ctr = (...args: string[]) => execFileSync(join(nodeBinDir, 'ctr'), ['--address', join(node.dir, 'containerd', 'containerd.sock'), '--namespace', 'k8s.io', ...args], { encoding: 'utf8' });
    // `ctr images ls`: REF TYPE DIGEST ...; the CRI keeps the tag, the digest and the image id as names of one image.
    const listed = ctr('images', 'ls').split('\n').slice(1).filter(Boolean).map((row) => row.split(/\s+/));
    const digest = listed.find(([ref]) => ref === image)?.[2];
    if (!digest) throw new Error(`registry outage: ${image} is not on node ${node.name} (${listed.map(([ref]) => ref).join(', ')})`);
    ctr('images', 'rm', ...listed.filter((row) => row[2] === digest).map(([ref]) => ref!));
  } catch (error) {
    // Half an outage is none: the node gets its registry back before the test hears why.
    writeFileSync(hostsFile, original);
    await proxy.close();
    throw error;
  }

  return {
    requests: () => proxy.requests(),
    async restore() {
      await proxy.set('up');
      writeFileSync(hostsFile, original);
    },
    close: () => proxy.close(),
  };
}
