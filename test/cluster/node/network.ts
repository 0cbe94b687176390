// The real node's link to the host: Pod egress through NAT, exactly as the host itself reaches the package
// registries (issue 20: pods install harness CLIs from the npm registry).
//
//   node netns:  uplink 198.19.<n>.2/30 (the node IP), default route via 198.19.<n>.1; Pods' traffic is already
//                masqueraded to the node IP by one static rule in the node (real-node.ts), so the host only sees 198.19.<n>.2
//                and every node may use the same Pod CIDR.
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

/** The veth pair, addresses and default route of the node, plus the host's NAT and FORWARD rules for it. */
export function setUpUplink(netns: string, id: string, transfer: Transfer): void {
  const { hostIf, hostIp, nodeIp, subnet } = transfer;
  run(['ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', NODE_UPLINK, 'netns', netns]);
  run(['ip', 'addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
  run(['ip', 'link', 'set', hostIf, 'up']);
  run(['ip', '-n', netns, 'addr', 'add', `${nodeIp}/30`, 'dev', NODE_UPLINK]);
  run(['ip', '-n', netns, 'link', 'set', NODE_UPLINK, 'up']);
  run(['ip', '-n', netns, 'route', 'add', 'default', 'via', hostIp]);
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
