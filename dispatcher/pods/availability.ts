// Claim-time availability: the same resolver as `tcab harnesses status` and the driver, fed from configuration
// and Secret metadata only (which keys a Secret has), never Secret data. An unavailable harness fails its Run
// before any Pod is made, with the message naming what to configure.
import { basename } from 'node:path';
import { apiKeySources, resolveAuth } from '../../shared/auth.ts';
import type { AuthResolution, ManifestAuth } from '../../shared/auth.ts';
import type { RunSpec } from '../../shared/run.ts';
import type { DispatcherConfig } from '../config.ts';

/** Secret name -> the data keys it holds (from metadata: the apiserver lists keys without values for us). */
export type SecretKeys = ReadonlyMap<string, ReadonlySet<string>>;

export function clusterAvailability(auth: ManifestAuth, spec: RunSpec, config: DispatcherConfig, secrets: SecretKeys, driverEnv: Readonly<Record<string, string>>): AuthResolution {
  const sources = new Set(apiKeySources(spec.harness, auth));
  // A key "is set" for the Pod when a configured Secret reference exists and that Secret has the key.
  const env: Record<string, string | undefined> = { ...driverEnv };
  for (const ref of config.TCAB_API_KEY_SECRETS) {
    if (sources.has(ref.env) && secrets.get(ref.secret)?.has(ref.key)) env[ref.env] = 'present-in-secret';
  }
  const subscriptionSecret = config.TCAB_SUBSCRIPTION_SECRETS[spec.harness];
  const resolution = resolveAuth(auth, spec.harness, {
    env,
    credentialFilePresent: (file) => subscriptionSecret !== undefined && (secrets.get(subscriptionSecret)?.has(basename(file)) ?? false),
    specOverride: spec.authMode,
  });
  if (resolution.available) return resolution;
  // Name the cluster-side fix, not a workstation one.
  const keyHint = auth.api_key ? `a Secret key for ${[...sources].join(' or ')} in the chart's credentials.apiKeys` : undefined;
  const subHint = auth.subscription ? `a Secret holding ${auth.subscription.files.map((f) => basename(f)).join(', ')} in credentials.subscriptions.${spec.harness}` : undefined;
  return { ...resolution, reason: `configure ${[keyHint, subHint].filter(Boolean).join(', or ')} (${resolution.reason})` };
}
