// The hosts a sealed run must not reach, stood in on the node so tests can try (issue 33), each an HTTP server
// (stand-in-server.ts) that answers with its name and logs every request:
//   metadata  169.254.169.254:80 on the loopback interface of the node's own namespace (this kernel has no dummy
//             interfaces), where a cloud node's instance metadata endpoint answers (node credentials): Pods route
//             to it through the node as they would there.
//   internet  198.51.100.10:80 (TEST-NET-2) in a network namespace of its own (`<node netns>-inet`), linked to the
//             node by a veth (node side 198.51.100.1/24): a public host outside every egress allowlist. CoreDNS
//             names it (INTERNET_HOST), so the egress proxy resolves it as it would a real one.
// Neither leaves the machine. Pods without a NetworkPolicy reach both (the control that makes a refusal mean
// something); the node's cleanup removes the namespace, the interface goes with the node's namespace.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const METADATA_IP = '169.254.169.254';
export const INTERNET_IP = '198.51.100.10';
export const INTERNET_HOST = 'internet.tcab.test';
export const METADATA_HOST = 'metadata.tcab.test';
const INTERNET_GATEWAY = '198.51.100.1';
export const STAND_IN_SERVER = join(import.meta.dirname, 'stand-in-server.ts');

export interface StandIn {
  name: string;
  ip: string;
  port: number;
  /** A DNS name CoreDNS gives it. */
  host: string;
  /** http://<host>/ */
  url: string;
}

export interface StandIns {
  metadata: StandIn;
  internet: StandIn;
}

const run = (argv: string[]) => execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export const standInNetns = (nodeNetns: string) => `${nodeNetns}-inet`;

/** The addresses and links; returns what the servers are, and the argv prefix that runs a command in each place. */
export function setUpStandInNetwork(nodeNetns: string): { standIns: StandIns; internetArgv: (argv: string[]) => string[] } {
  run(['ip', '-n', nodeNetns, 'addr', 'add', `${METADATA_IP}/32`, 'dev', 'lo']);
  const inet = standInNetns(nodeNetns);
  run(['ip', 'netns', 'add', inet]);
  run(['ip', '-n', inet, 'link', 'set', 'lo', 'up']);
  run(['ip', '-n', nodeNetns, 'link', 'add', 'inet0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', inet]);
  run(['ip', '-n', nodeNetns, 'addr', 'add', `${INTERNET_GATEWAY}/24`, 'dev', 'inet0']);
  run(['ip', '-n', nodeNetns, 'link', 'set', 'inet0', 'up']);
  run(['ip', '-n', inet, 'addr', 'add', `${INTERNET_IP}/24`, 'dev', 'eth0']);
  run(['ip', '-n', inet, 'link', 'set', 'eth0', 'up']);
  run(['ip', '-n', inet, 'route', 'add', 'default', 'via', INTERNET_GATEWAY]);
  const standIn = (name: string, ip: string, host: string): StandIn => ({ name, ip, port: 80, host, url: `http://${host}/` });
  return {
    standIns: { metadata: standIn('metadata', METADATA_IP, METADATA_HOST), internet: standIn('internet', INTERNET_IP, INTERNET_HOST) },
    internetArgv: (argv) => ['nsenter', `--net=/run/netns/${inet}`, '--', ...argv],
  };
}

/** CoreDNS `hosts` lines naming the stand-ins (the node's Corefile). */
export function standInHostsEntries(): string[] {
  return [`${INTERNET_IP} ${INTERNET_HOST}`, `${METADATA_IP} ${METADATA_HOST}`];
}

/** Removes the stand-in namespace of a node (its veth end goes with it). Idempotent. */
export function removeStandInNetwork(nodeNetns: string): void {
  spawnSync('ip', ['netns', 'del', standInNetns(nodeNetns)], { stdio: 'ignore' });
}
