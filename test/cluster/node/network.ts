// The real node's link to the host: Pod egress through NAT, exactly as the host itself reaches the package
// registries (issue 20: pods install harness CLIs from the npm registry).
//
//   node netns:  uplink 198.19.<n>.2/30 (the node IP); NO default route: a /32 route via 198.19.<n>.1 for each
//                address the package registries and the host's resolvers have (egressDestinations), and an
//                `unreachable` default, so anything else a Pod sends out fails at once (ENETUNREACH) instead of leaving
//                the machine by its default route (issue 33: a ClusterIP on a port its Service does not list reached
//                the machine's outbound proxy). Pods' traffic is already masqueraded to the node IP by one static rule
//                in the node (real-node.ts), so the host only sees 198.19.<n>.2 and every node may use the same Pod CIDR.
//   host netns:  veth th-<id> 198.19.<n>.1/30; iptables (the host's own binary, nf_tables backend here):
//                nat POSTROUTING  -s 198.19.<n>.0/30 -o <default-route interface> -j MASQUERADE
//                filter FORWARD   new connections *into* the node dropped (only the host itself, via OUTPUT,
//                                 reaches the kubelet and the node's listeners), plus accepts for the node's
//                                 traffic when the FORWARD policy is not ACCEPT;
//                net.ipv4.ip_forward=1 (recorded and restored by real-node.ts's host record, last node out).
// Every rule carries the comment `tcab-real-node:<id>`, so cleanup (and the sweep of a killed node) finds exactly
// its own rules. The transfer subnet <n> is allocated under real-node.ts's machine-wide host lock.
import { execFileSync, spawnSync } from 'node:child_process';
import { isIPv4 } from 'node:net';
import { readFileSync } from 'node:fs';

export interface Transfer {
  /** 198.19.<index>.0/30 */
  index: number;
  subnet: string;
  hostIp: string;
  nodeIp: string;
  /** The host end of the veth pair (the node end is `uplink` inside the node's namespace). */
  hostIf: string;
}

export const RULE_COMMENT_PREFIX = 'tcab-real-node:';
/** The routing table of the node's own connections to ClusterIPs (setUpUplink). */
const LOCAL_SERVICES_TABLE = 100;
/**
 * Where Pods reach the test's host servers (real-node.ts exposeHostPort): an address on the node namespace's
 * loopback, the same on every node (like the Pod CIDR); 198.19.0.0/30 is never a transfer subnet (those start at
 * 198.19.1.0/30).
 */
export const HOST_SERVICES_IP = '198.19.0.1';
export const NODE_UPLINK = 'uplink';

const run = (argv: string[]) => execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
/** `-w`: wait for the xtables lock (other nodes, kube-proxy-free host, other sessions' tools). */
const iptables = (table: string, args: string[]) => run(['iptables', '-w', '5', '-t', table, ...args]);

/** Transfer subnets in use on the host: addresses inside 198.19.0.0/16 on any host interface. */
function indicesOnHost(): number[] {
  const out: number[] = [];
  for (const m of run(['ip', '-4', '-o', 'addr', 'show']).matchAll(/inet 198\.19\.(\d+)\.\d+\//g)) out.push(Number(m[1]));
  return out;
}

/** The lowest free 198.19.<n>.0/30 (n in 1..254). Call with the host lock held, passing the live nodes' indices. */
export function allocateTransfer(id: string, liveIndices: number[]): Transfer {
  const taken = new Set([...liveIndices, ...indicesOnHost()]);
  for (let index = 1; index <= 254; index++) {
    if (taken.has(index)) continue;
    return { index, subnet: `198.19.${index}.0/30`, hostIp: `198.19.${index}.1`, nodeIp: `198.19.${index}.2`, hostIf: `th-${id}` };
  }
  throw new Error('no free transfer subnet in 198.19.0.0/16 (254 real nodes live?)');
}

/** The interface of the host's default route (where the host's own traffic to the registries leaves). */
export function hostEgressInterface(): string {
  const m = /\bdev (\S+)/.exec(run(['ip', '-4', 'route', 'show', 'default']));
  if (!m) throw new Error('the host has no IPv4 default route: Pods would have no egress');
  return m[1]!;
}

/** The host resolver(s) CoreDNS forwards to: /etc/resolv.conf's IPv4 nameservers a Pod can reach (not loopback). */
export function hostResolvers(resolvConf = '/etc/resolv.conf'): string[] {
  const servers = [...readFileSync(resolvConf, 'utf8').matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]!);
  return servers.filter((ip) => isIPv4(ip) && !ip.startsWith('127.'));
}

/**
 * The package registries Pods may reach, as the host reaches them (installs of harness CLIs, Python packages, Go
 * modules, Debian packages). Names that do not resolve here are left out; on this kind of machine they all resolve
 * to the one TLS-intercepting proxy.
 */
export const REGISTRY_HOSTS = ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'proxy.golang.org', 'sum.golang.org', 'deb.debian.org', 'crates.io', 'static.crates.io', 'index.crates.io', 'github.com', 'codeload.github.com'];

/** IPv4 addresses `name` resolves to on the host (getent: the host's own resolver and /etc/hosts), none if it does not. */
export function resolveIpv4(name: string): string[] {
  const out = spawnSync('getent', ['ahostsv4', name], { encoding: 'utf8' });
  if (out.status !== 0) return [];
  return [...new Set(out.stdout.split('\n').map((line) => line.split(/\s+/)[0]!).filter((ip) => isIPv4(ip)))];
}

/** Where the node's Pods may send traffic out of the node: the registries' addresses and the host's resolvers. */
export function egressDestinations(): string[] {
  const addresses = new Set(hostResolvers());
  for (const host of REGISTRY_HOSTS) for (const ip of resolveIpv4(host)) addresses.add(ip);
  return [...addresses].sort();
}

/**
 * The veth pair and addresses of the node, a route to each of `destinations` (and nowhere else: the default is
 * unreachable), plus the host's NAT and FORWARD rules for it.
 */
export function setUpUplink(netns: string, id: string, transfer: Transfer, destinations: readonly string[], serviceCidr: string): void {
  const { hostIf, hostIp, nodeIp, subnet } = transfer;
  run(['ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', NODE_UPLINK, 'netns', netns]);
  run(['ip', 'addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
  run(['ip', 'link', 'set', hostIf, 'up']);
  run(['ip', '-n', netns, 'addr', 'add', `${nodeIp}/30`, 'dev', NODE_UPLINK]);
  run(['ip', '-n', netns, 'link', 'set', NODE_UPLINK, 'up']);
  for (const ip of destinations) run(['ip', '-n', netns, 'route', 'add', `${ip}/32`, 'via', hostIp]);
  run(['ip', '-n', netns, 'route', 'add', 'unreachable', 'default']);
  // The node's own connections to a ClusterIP (kube-proxy DNATs them in OUTPUT, after a first route lookup) need a
  // route to look up: one in a table only traffic the node itself sends consults (`iif lo`), so a Pod's packet to
  // a ClusterIP port its Service does not list still finds none and is answered "No route to host".
  run(['ip', '-n', netns, 'route', 'add', 'table', String(LOCAL_SERVICES_TABLE), serviceCidr, 'dev', 'lo']);
  run(['ip', '-n', netns, 'rule', 'add', 'iif', 'lo', 'lookup', String(LOCAL_SERVICES_TABLE), 'priority', '100']);
  // Forwarding inside the node's namespace (bridge -> uplink); per namespace, so the host's value is not touched.
  run(['nsenter', `--net=/run/netns/${netns}`, '--', 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
  const comment = ['-m', 'comment', '--comment', `${RULE_COMMENT_PREFIX}${id}`];
  iptables('nat', ['-A', 'POSTROUTING', '-s', subnet, '-o', hostEgressInterface(), ...comment, '-j', 'MASQUERADE']);
  // Inserted first, so no other chain (a CNI's, Docker's) decides before them.
  iptables('filter', ['-I', 'FORWARD', '1', '-o', hostIf, '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED', ...comment, '-j', 'DROP']);
  if (!/^-P FORWARD ACCEPT$/m.test(iptables('filter', ['-S', 'FORWARD']))) {
    iptables('filter', ['-I', 'FORWARD', '1', '-i', hostIf, ...comment, '-j', 'ACCEPT']);
    iptables('filter', ['-I', 'FORWARD', '1', '-o', hostIf, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', ...comment, '-j', 'ACCEPT']);
  }
}

/** The host's iptables rules (as `-A CHAIN ...` lines) of nodes whose id `which` accepts, by table. */
export function nodeRules(which: (id: string) => boolean): { table: string; rule: string }[] {
  const out: { table: string; rule: string }[] = [];
  for (const table of ['nat', 'filter']) {
    let listing: string;
    try {
      listing = iptables(table, ['-S']);
    } catch {
      continue; // no iptables (then we never added a rule either)
    }
    for (const rule of listing.split('\n')) {
      const m = new RegExp(`--comment "?${RULE_COMMENT_PREFIX}([\\w-]+)"?`).exec(rule);
      if (rule.startsWith('-A ') && m && which(m[1]!)) out.push({ table, rule });
    }
  }
  return out;
}

/** Removes a node's host side: its veth (and with it the peer) and every rule naming it. Idempotent. */
export function removeUplink(id: string, hostIf: string | undefined): void {
  if (hostIf) spawnSync('ip', ['link', 'del', hostIf], { stdio: 'ignore' });
  removeRules((ruleId) => ruleId === id);
}

/** Deletes the rules of nodes `which` accepts (our comments hold no spaces, so a rule splits on whitespace). */
export function removeRules(which: (id: string) => boolean): void {
  for (const { table, rule } of nodeRules(which)) {
    const args = rule.replace(/"/g, '').split(/\s+/).filter(Boolean);
    args[0] = '-D';
    spawnSync('iptables', ['-w', '5', '-t', table, ...args], { stdio: 'ignore' });
  }
}

/** What nodes that are gone left on the host (a crash during cleanup): veths `th-<id>` and rules naming them. */
export function removeOrphans(liveIds: Set<string>): void {
  for (const m of run(['ip', '-o', 'link', 'show']).matchAll(/^\d+: th-(rn[0-9a-f]+)@/gm)) {
    if (!liveIds.has(m[1]!)) spawnSync('ip', ['link', 'del', `th-${m[1]}`], { stdio: 'ignore' });
  }
  removeRules((id) => !liveIds.has(id));
}

/**
 * The links between the nodes of one cluster (linkNodes): 198.18.254.0/24, a /30 per pair of nodes, addresses that
 * exist only inside node namespaces (the host never routes a Pod CIDR: several test clusters use the same ones).
 */
const PEER_LINK_PREFIX = '198.18.254';
export const MAX_PEER_LINKS = 63;

/** What linkNodes needs of a node: its namespace, its node IP and its Pod CIDR. */
export interface PeerNode {
  netns: string;
  ip: string;
  podCidr: string;
}

/**
 * A direct link between two nodes of one cluster (a veth pair `peer<pair>` whose ends live in the two namespaces),
 * and routes over it to the other node's Pod CIDR and node IP: Pod to Pod across nodes with no NAT (NetworkPolicy
 * sees the real source), and Pods of one node reach another node's IP (the `kubernetes` Service's endpoint, a
 * kubelet). Nothing of it is on the host: it goes with either namespace, so a node's cleanup needs no new step.
 */
export function linkNodes(a: PeerNode, b: PeerNode, pair: number): void {
  if (!Number.isInteger(pair) || pair < 0 || pair >= MAX_PEER_LINKS) throw new Error(`linkNodes: pair ${pair} is not in 0..${MAX_PEER_LINKS - 1}`);
  const link = `peer${pair}`;
  const ends = [
    { node: a, ip: `${PEER_LINK_PREFIX}.${4 * pair + 1}`, other: b },
    { node: b, ip: `${PEER_LINK_PREFIX}.${4 * pair + 2}`, other: a },
  ];
  run(['ip', '-n', a.netns, 'link', 'add', link, 'type', 'veth', 'peer', 'name', link, 'netns', b.netns]);
  for (const end of ends) {
    run(['ip', '-n', end.node.netns, 'addr', 'add', `${end.ip}/30`, 'dev', link]);
    run(['ip', '-n', end.node.netns, 'link', 'set', link, 'up']);
  }
  for (const [end, far] of [[ends[0]!, ends[1]!], [ends[1]!, ends[0]!]] as const) {
    run(['ip', '-n', end.node.netns, 'route', 'add', far.node.podCidr, 'via', far.ip, 'dev', link]);
    run(['ip', '-n', end.node.netns, 'route', 'add', `${far.node.ip}/32`, 'via', far.ip, 'dev', link]);
  }
}

/** A node's links to the others and its uplink, down: what a node that lost power looks like to everyone else (silence, not refusals). */
export function cutNodeLinks(netns: string): void {
  const links = run(['ip', '-n', netns, '-o', 'link', 'show']);
  for (const m of links.matchAll(/^\d+: ((?:peer\d+)|uplink)@/gm)) run(['ip', '-n', netns, 'link', 'set', m[1]!, 'down']);
}
