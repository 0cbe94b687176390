// What a Run's driver Pod may reach outside the cluster (issue 33), decided from its spec and the install's egress
// profiles (shared/egress.ts, the chart's TCAB_EGRESS). Pure: the claim pass asks, the Pod builder applies.
//   - The profile: spec.egress, else the install's default; a name the install does not define refuses the Run
//     with a message naming spec.egress.
//   - The proxy: the profile's port of the chart's egress proxy, as HTTP(S)_PROXY for the driver and the harness
//     (driver/child-env.ts passes them on), NO_PROXY for the in-cluster names reached directly.
//   - The Pod carries the profile as a label (the chart's NetworkPolicy for that profile selects it: only its own
//     proxy port is open to it) and the hosts as an annotation, so a status rebuilt from the Pod says the same.
import type { V1EnvVar, V1HostAlias, V1Pod } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import { GROUP } from '../../shared/api-group.ts';
import { ANY_HOST, EGRESS_PROFILE_NAME, RunEgress, hostAllowed } from '../../shared/egress.ts';
import type { EgressConfig } from '../../shared/egress.ts';
import type { RunSpec } from '../../shared/run.ts';
import { EGRESS_ANNOTATION } from '../../kube/resources.ts';

export const EGRESS_LABEL = `${GROUP}/egress`;

/** The profile of a Run and its proxy; `undefined` egress when the install defines no profiles. */
export interface RunEgressPlan {
  egress: RunEgress;
  proxy?: string;
  noProxy: readonly string[];
}

export type EgressDecision = { ok: true; plan?: RunEgressPlan } | { ok: false; reason: string };

/**
 * @param installHosts what the harness's install reaches outside the cluster (installHostsOf): a Run that names no
 *   profile gets the install's default when it lets them through, else the strictest profile that does (fewest
 *   hosts, `*` last), so the install works and the session gets no more than that.
 */
export function decideEgress(spec: Pick<RunSpec, 'egress'>, config: EgressConfig | null, installHosts: readonly string[] = []): EgressDecision {
  const names = config ? Object.keys(config.profiles).sort() : [];
  if (!config) {
    if (spec.egress === undefined) return { ok: true };
    return { ok: false, reason: `invalid spec.egress: "${spec.egress}": this install defines no egress profiles (the chart's egress values); leave it unset` };
  }
  if (spec.egress !== undefined && !Object.hasOwn(config.profiles, spec.egress)) return { ok: false, reason: `invalid spec.egress: "${spec.egress}" is not one of this install's egress profiles (${names.join(', ')})` };
  const { profile, reason } = spec.egress !== undefined ? { profile: spec.egress, reason: 'spec.egress' } : defaultProfileFor(config, installHosts);
  const chosen = config.profiles[profile]!;
  return { ok: true, plan: { egress: { profile, hosts: [...chosen.hosts], reason }, proxy: chosen.proxy, noProxy: config.noProxy } };
}

function defaultProfileFor(config: EgressConfig, installHosts: readonly string[]): { profile: string; reason: string } {
  const lets = (name: string) => installHosts.every((host) => hostAllowed(host, config.profiles[name]!.hosts));
  if (lets(config.defaultProfile)) return { profile: config.defaultProfile, reason: "the install's default profile" };
  const breadth = (name: string) => (config.profiles[name]!.hosts.includes(ANY_HOST) ? Infinity : config.profiles[name]!.hosts.length);
  const strictest = Object.keys(config.profiles).filter(lets).sort((a, b) => breadth(a) - breadth(b) || a.localeCompare(b))[0];
  if (!strictest) return { profile: config.defaultProfile, reason: `the install's default profile (no profile lets the harness install reach ${installHosts.join(', ')})` };
  return { profile: strictest, reason: `the strictest profile that lets the harness install reach ${installHosts.join(', ')}` };
}

/**
 * What a harness's install reaches outside the cluster: the hosts its manifest names, and the npm registry's when
 * the install uses npm and the registry is not reached directly (an in-cluster npm cache matches NO_PROXY).
 */
export function installHostsOf(install: { npm_package?: string; hosts?: readonly string[] } | undefined, npmRegistry: string, noProxy: readonly string[]): string[] {
  if (!install) return [];
  const hosts = new Set(install.hosts ?? []);
  if (install.npm_package) {
    const registry = new URL(npmRegistry).hostname;
    if (!matchesNoProxy(registry, noProxy)) hosts.add(registry);
  }
  return [...hosts].sort();
}

/**
 * The proxy variables of a driver Pod: both spellings (curl and Go read the lower case ones, most others the upper
 * case), and NODE_USE_ENV_PROXY so Node's own fetch and http (Node >= 24) honour them in Node-based harnesses. No
 * proxy: NO_PROXY alone is pointless, so nothing.
 */
export function proxyEnv(plan: RunEgressPlan | undefined): V1EnvVar[] {
  if (!plan?.proxy) return [];
  const noProxy = plan.noProxy.join(',');
  return [
    { name: 'HTTP_PROXY', value: plan.proxy },
    { name: 'HTTPS_PROXY', value: plan.proxy },
    { name: 'http_proxy', value: plan.proxy },
    { name: 'https_proxy', value: plan.proxy },
    { name: 'NO_PROXY', value: noProxy },
    { name: 'no_proxy', value: noProxy },
    { name: 'NODE_USE_ENV_PROXY', value: '1' },
  ];
}

/** NO_PROXY's matching as curl documents it: an entry is a host, or a domain its subdomains match (leading `.` optional). */
export function matchesNoProxy(host: string, noProxy: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return noProxy.some((entry) => {
    const e = entry.trim().toLowerCase().replace(/^\*?\./, '');
    if (!e) return false;
    if (e === '*') return true;
    return h === e || h.endsWith(`.${e}`);
  });
}

/** The hostname of an http(s)/nats URL, or undefined for anything else (a plain value, a malformed URL). */
function hostOf(value: string): string | undefined {
  if (!/^(https?|nats|tls):\/\//i.test(value)) return undefined;
  try {
    const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
    return host && isIP(host) === 0 ? host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The names a driver Pod without cluster DNS must find in /etc/hosts (hostAliases): NATS, the egress proxy, and
 * every URL the driver is given (its env: the npm cache, model endpoints, an OTLP collector) that is reached
 * directly, i.e. matches NO_PROXY (every one when the install has no proxy), and `directUrls` (the cluster's model
 * gateway: always reached directly, the Pod's NO_PROXY names it). Names reached through the proxy are resolved by
 * the proxy, not by the Pod. Sorted, unique.
 */
export function namesToResolve(natsUrl: string, driverEnv: Readonly<Record<string, string>>, plan: RunEgressPlan | undefined, directUrls: readonly string[] = []): string[] {
  const names = new Set<string>();
  const add = (value: string | undefined, direct: boolean) => {
    const host = value ? hostOf(value) : undefined;
    if (host && direct) names.add(host.toLowerCase());
  };
  for (const url of natsUrl.split(',')) add(url.trim(), true);
  add(plan?.proxy, true);
  for (const url of directUrls) add(url, true);
  for (const value of Object.values(driverEnv)) {
    const host = hostOf(value);
    if (host) add(value, !plan?.proxy || matchesNoProxy(host, plan.noProxy));
  }
  return [...names].sort();
}

/** hostAliases from resolved names: one entry per address, its names sorted (a stable Pod spec for the same input). */
export function hostAliasesOf(resolved: ReadonlyMap<string, readonly string[]>): V1HostAlias[] {
  const byIp = new Map<string, Set<string>>();
  for (const [name, ips] of resolved) for (const ip of ips) (byIp.get(ip) ?? byIp.set(ip, new Set()).get(ip)!).add(name);
  return [...byIp.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([ip, hostnames]) => ({ ip, hostnames: [...hostnames].sort() }));
}

/**
 * The egress a driver Pod was made with, for a status rebuilt from the Pod: its annotation when it is a RunEgress of
 * the profile its label (what the NetworkPolicy enforces) names, else the label's profile alone.
 */
export function egressOfPod(pod: V1Pod): RunEgress | undefined {
  const profile = pod.metadata?.labels?.[EGRESS_LABEL];
  if (!profile || !EGRESS_PROFILE_NAME.test(profile)) return undefined;
  let recorded: unknown;
  try {
    recorded = JSON.parse(pod.metadata?.annotations?.[EGRESS_ANNOTATION] ?? 'null');
  } catch {
    // an annotation someone edited
  }
  const parsed = RunEgress.safeParse(recorded);
  return parsed.success && parsed.data.profile === profile ? parsed.data : { profile, hosts: [] };
}
