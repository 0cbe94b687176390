// Egress profiles (issue 33): what a run's agent may reach outside the cluster. The chart defines the profiles
// (values `egress`), runs its egress proxy (Squid) with one port per profile, each allowing that profile's hosts,
// and hands the dispatcher this configuration as JSON (TCAB_EGRESS). A Run picks a profile by name
// (spec.egress); its driver Pod gets the profile's proxy as HTTP(S)_PROXY and a NetworkPolicy that lets it reach
// that proxy port and nothing else outside the run's own needs. The profile and its hosts go into the Run's status.
import { z } from 'zod';

/** A profile's name: a label value and a Squid port name, so lower case, digits and `-`. */
export const EGRESS_PROFILE_NAME = /^[a-z][a-z0-9-]{0,30}$/;
export const EgressProfileName = z.string().regex(EGRESS_PROFILE_NAME, 'must be an egress profile name: lower case letters, digits and "-", starting with a letter, at most 31 characters');

/** `*` in a profile's hosts: any host the proxy does not refuse (its denied destinations: private, link-local, the cluster). */
export const ANY_HOST = '*';

/** Whether a profile's hosts let `host` through, as the proxy matches them (`.example.com`: it and its subdomains). */
export function hostAllowed(host: string, hosts: readonly string[]): boolean {
  const h = host.toLowerCase();
  return hosts.some((p) => p === ANY_HOST || p === h || (p.startsWith('.') && (h === p.slice(1) || h.endsWith(p))));
}

export const EgressProfile = z.strictObject({
  /** The egress proxy's URL for this profile (http://<service>.<namespace>.svc:<port>); absent: no proxy at all. */
  proxy: z.url({ protocol: /^http$/ }).optional(),
  /** The hosts the proxy lets this profile reach (`.example.com` = the domain and its subdomains; `*` = any). */
  hosts: z.array(z.string().min(1)),
});
export type EgressProfile = z.infer<typeof EgressProfile>;

export const EgressConfig = z.strictObject({
  /** The profile of a Run whose spec.egress is unset. */
  defaultProfile: EgressProfileName,
  profiles: z.record(EgressProfileName, EgressProfile),
  /** NO_PROXY of driver Pods: in-cluster names and addresses reached directly (NATS, the npm cache, models in the cluster). */
  noProxy: z.array(z.string().min(1)),
}).refine((c) => Object.hasOwn(c.profiles, c.defaultProfile), { message: 'defaultProfile must name one of profiles', path: ['defaultProfile'] });
export type EgressConfig = z.infer<typeof EgressConfig>;

/** What a Run was allowed, as its status and the console show it. */
export const RunEgress = z
  .strictObject({
    profile: EgressProfileName.describe('The egress profile the run got (spec.egress, or the install\'s default)'),
    hosts: z.array(z.string()).describe('The hosts outside the cluster the profile lets the run reach through the egress proxy; `*` = any public host'),
    reason: z.string().optional().describe('Why this profile: named in spec.egress, the install\'s default, or the strictest that lets the harness install through'),
  })
  .describe('What the run could reach outside the cluster');
export type RunEgress = z.infer<typeof RunEgress>;
