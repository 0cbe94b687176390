// Which login a Run would hold that only one Run at a time may use (issue 34): a subscription whose manifest sets
// `auth.subscription.serialize` (its refresh token rotates on use, so two runs with copies of it log each other
// out). In a cluster the login is the harness's subscription Secret (TCAB_SUBSCRIPTION_SECRETS[harness]): every
// Run's Pod mounts that one Secret, so two Runs that resolve to it share one login. The claim decision
// (decide.ts) lets at most one Run per login hold a slot; the others wait queued, 'login-busy'.
import type { HarnessManifest } from '../../shared/manifest.ts';
import { RunSpec as RunSpecSchema } from '../../shared/run.ts';
import type { RunSpec } from '../../shared/run.ts';
import type { DispatcherConfig } from '../config.ts';
import { clusterAvailability } from '../pods/availability.ts';
import type { ExistingSecrets } from '../pods/availability.ts';

/** The login key of a subscription Secret (a name in the dispatcher's namespace). */
export const subscriptionLogin = (secret: string) => `secret/${secret}`;

/**
 * The serialised login `spec` resolves to, or undefined: a harness without `serialize`, a Run resolving to an API
 * key, or one whose Secret is not there (it is refused at its claim, and holds nothing).
 */
export function serializedLoginOf(
  manifest: HarnessManifest,
  spec: Pick<RunSpec, 'harness' | 'authMode'>,
  config: Pick<DispatcherConfig, 'TCAB_SUBSCRIPTION_SECRETS' | 'TCAB_API_KEY_SECRETS' | 'TCAB_DRIVER_ENV'>,
  secrets: ExistingSecrets,
): string | undefined {
  if (manifest.auth.subscription?.serialize === undefined) return undefined;
  const resolution = clusterAvailability(manifest.auth, spec as RunSpec, config as DispatcherConfig, secrets, config.TCAB_DRIVER_ENV);
  if (!resolution.available || resolution.mode !== 'subscription') return undefined;
  const secret = Object.hasOwn(config.TCAB_SUBSCRIPTION_SECRETS, spec.harness) ? config.TCAB_SUBSCRIPTION_SECRETS[spec.harness] : undefined;
  return secret === undefined ? undefined : subscriptionLogin(secret);
}

/**
 * For one claim pass: a Run's spec (as stored, unvalidated) -> its serialised login or undefined. Manifests are
 * read once per harness per pass; a spec is parsed only when its harness serialises (most passes parse nothing).
 */
export function serializedLoginResolver(
  config: Pick<DispatcherConfig, 'TCAB_SUBSCRIPTION_SECRETS' | 'TCAB_API_KEY_SECRETS' | 'TCAB_DRIVER_ENV'>,
  secrets: ExistingSecrets,
  manifestOf: (slug: string, model: string) => HarnessManifest,
): (spec: unknown) => string | undefined {
  const manifests = new Map<string, HarnessManifest | null>();
  return (raw) => {
    const { harness, model } = (raw ?? {}) as { harness?: unknown; model?: unknown };
    if (typeof harness !== 'string' || typeof model !== 'string') return undefined;
    const key = `${harness}\0${model}`;
    if (!manifests.has(key)) {
      try {
        manifests.set(key, manifestOf(harness, model));
      } catch {
        manifests.set(key, null); // an unknown harness is refused at its claim
      }
    }
    const manifest = manifests.get(key);
    if (!manifest || manifest.auth.subscription?.serialize === undefined) return undefined;
    const parsed = RunSpecSchema.safeParse(raw);
    return parsed.success ? serializedLoginOf(manifest, parsed.data, config, secrets) : undefined;
  };
}
