// Which way a claimed Run's provider key goes in a cluster (issue 34): through the cluster's model gateway (its
// driver Pod gets a per-run token under the key variable and no provider key at all) or, as before, into the Pod by
// secretKeyRef. Pure: the claim pass asks with the auth resolution it already made for the Run (availability.ts),
// so the variable the token goes in is the one the driver's own resolution picks from the same inputs.
import type { AuthResolution } from '../../shared/auth.ts';
import { gatewayProviderFor } from '../../shared/gateway-route.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { DEFAULT_PROVIDERS } from '../../gateway/providers.ts';
import type { ApiKeySecretRef } from '../config.ts';

/** The token's variable and the gateway provider it is for, or why the key stays in the harness's environment. */
export type GatewayPlan = { gateway: { keyVar: string; provider: string } } | { keyInHarness: string };

export const NO_GATEWAY = 'no model gateway is configured (TCAB_GATEWAY_URL)';
export const SUBSCRIPTION_AUTH = 'the run uses subscription auth: no provider key to route';

export interface GatewayPlanInput {
  manifest: HarnessManifest;
  /** The Run's auth resolution (clusterAvailability): its mode and, for api-key, the variable its key is read from. */
  resolution: AuthResolution;
  /** TCAB_API_KEY_SECRETS: the keys the chart also gives the gateway Deployment, under the same variables. */
  apiKeySecrets: readonly ApiKeySecretRef[];
  /** Whether the install runs a gateway (TCAB_GATEWAY_URL). */
  gatewayConfigured: boolean;
}

export function planGateway(input: GatewayPlanInput): GatewayPlan {
  const { manifest, resolution } = input;
  if (!input.gatewayConfigured) return { keyInHarness: NO_GATEWAY };
  if (!resolution.available) return { keyInHarness: `auth is unavailable: ${resolution.reason}` };
  if (resolution.mode !== 'api-key') return { keyInHarness: SUBSCRIPTION_AUTH };
  const { keyVar } = resolution;
  // The key came from the chart's plain driver.env, not a Secret: the gateway was not given it.
  if (!input.apiKeySecrets.some((ref) => ref.env === keyVar)) return { keyInHarness: `${keyVar} comes from driver.env, not a Secret in credentials.apiKeys: the gateway does not hold it` };
  const route = gatewayProviderFor(manifest, keyVar);
  if ('keyInHarness' in route) return route;
  // The gateway holds one key per provider, read from that provider's own variables (gateway/providers.ts
  // keysFromEnv): a per-harness key (TCAB_API_KEY_<SLUG>) or any other variable it does not read would be swapped
  // for a different key, or for none, so such a key keeps today's way.
  const keyVars = DEFAULT_PROVIDERS.find((p) => p.name === route.provider)?.keyVars ?? [];
  if (!keyVars.includes(keyVar)) return { keyInHarness: `the gateway reads ${route.provider}'s key from ${keyVars.join(' or ') || 'no variable'}, not ${keyVar}` };
  return { gateway: { keyVar, provider: route.provider } };
}
