// Claim-time availability: the same resolver as `tcab harnesses status` and the driver, fed from configuration
// and Secret metadata only (which Secrets exist: the dispatcher watches Secrets as PartialObjectMetadata and never
// receives their data). A configured key reference counts when its Secret exists. A key missing from an existing
// Secret is caught one step later: the Pod's secretKeyRefs are optional, so the driver starts without the variable
// and its own resolver (this same one) fails the Run before any install, naming the variable to set.
// An unavailable harness fails its Run before any Pod is made, naming what to configure.
import { basename } from 'node:path';
import { apiKeySources, resolveAuth } from '../../shared/auth.ts';
import type { AuthResolution, ManifestAuth } from '../../shared/auth.ts';
import type { RunSpec } from '../../shared/run.ts';
import type { DispatcherConfig } from '../config.ts';

/** Names of the Secrets that exist in the dispatcher's namespace. */
export type ExistingSecrets = ReadonlySet<string>;

/** What of a Run availability reads: its harness and the auth mode it asks for, if any. */
export type AvailabilityAsk = Pick<RunSpec, 'harness'> & Partial<Pick<RunSpec, 'authMode'>>;

export function clusterAvailability(auth: ManifestAuth, spec: AvailabilityAsk, config: DispatcherConfig, secrets: ExistingSecrets, driverEnv: Readonly<Record<string, string>>): AuthResolution {
  const sources = new Set(apiKeySources(spec.harness, auth));
  // A key "is set" for the Pod when a configured Secret reference names a Secret that exists.
  const env: Record<string, string | undefined> = { ...driverEnv };
  for (const ref of config.TCAB_API_KEY_SECRETS) {
    if (sources.has(ref.env) && secrets.has(ref.secret)) env[ref.env] = 'present-in-secret';
  }
  // Own keys only: a Run's harness slug is caller text, and "constructor" must not find Object's.
  const subscriptionSecret = Object.hasOwn(config.TCAB_SUBSCRIPTION_SECRETS, spec.harness) ? config.TCAB_SUBSCRIPTION_SECRETS[spec.harness] : undefined;
  const resolution = resolveAuth(auth, spec.harness, {
    env,
    credentialFilePresent: () => subscriptionSecret !== undefined && secrets.has(subscriptionSecret),
    specOverride: spec.authMode,
  });
  if (resolution.available) return resolution;
  // Name the cluster-side fix, not a workstation one.
  const keyHint = auth.api_key ? `a Secret key for ${[...sources].join(' or ')} in the chart's credentials.apiKeys` : undefined;
  const subHint = auth.subscription ? `a Secret holding ${auth.subscription.files.map((f) => basename(f)).join(', ')} in credentials.subscriptions.${spec.harness}` : undefined;
  return { ...resolution, reason: `configure ${[keyHint, subHint].filter(Boolean).join(', or ')} (${resolution.reason})` };
}
