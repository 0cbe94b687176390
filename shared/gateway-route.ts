// Which way a harness's API key goes (issue 34): to the model gateway (the harness gets the gateway's URL and a
// per-run token, the key stays in the driver) or into the harness's environment as before, with the reason its
// manifest gives. Pure: the driver asks with the key variable auth resolution chose (shared/auth.ts keyVar), and
// `tcab harnesses status` and the console show the same answers.
import { apiKeyOverrideVariable } from './auth.ts';
import type { HarnessManifest } from './manifest.ts';

/** One key's way: the gateway provider it is for, or why it stays in the harness's environment. */
export type GatewayRoute = { provider: string } | { keyInHarness: string };

/** A harness's ways for any of its keys: the gateway providers (in host_vars order, no repeats), or why not. */
export type KeyRoutes = { gateway: string[] } | { keyInHarness: string };

export const NO_GATEWAY_ROUTE = 'no gateway route declared';

/**
 * The route of the key auth resolution found in `keyVariable`: one of the manifest's `auth.api_key.host_vars`, or
 * the per-harness override `TCAB_API_KEY_<SLUG>`, which is taken to be a key for the first host variable's provider.
 */
export function gatewayProviderFor(manifest: HarnessManifest, keyVariable: string): GatewayRoute {
  const gateway = manifest.gateway;
  if (!gateway) return { keyInHarness: NO_GATEWAY_ROUTE };
  if ('key_in_harness' in gateway) return { keyInHarness: gateway.key_in_harness };
  const hostVars = manifest.auth.api_key?.host_vars ?? [];
  const variable = keyVariable === apiKeyOverrideVariable(manifest.slug) ? hostVars[0] : keyVariable;
  if (variable !== undefined && hostVars.includes(variable) && Object.hasOwn(gateway.providers, variable)) return { provider: gateway.providers[variable]! };
  return { keyInHarness: `${keyVariable} is not one of ${manifest.slug}'s key variables (${hostVars.join(', ')}): no gateway route for it` };
}

/** Every route a harness's key can take, for listings; undefined when the harness has no API-key mode. */
export function keyRoutesOf(manifest: HarnessManifest): KeyRoutes | undefined {
  const hostVars = manifest.auth.api_key?.host_vars;
  if (!hostVars) return undefined;
  const routes = hostVars.map((v) => gatewayProviderFor(manifest, v));
  const refused = routes.find((r) => 'keyInHarness' in r);
  if (refused) return { keyInHarness: refused.keyInHarness };
  return { gateway: [...new Set(routes.map((r) => (r as { provider: string }).provider))] };
}

/** One line for a terminal: "gateway: anthropic", "gateway: dashscope or openai", "key in harness: <reason>". */
export function keyRouteText(route: KeyRoutes): string {
  return 'gateway' in route ? `gateway: ${route.gateway.join(' or ')}` : `key in harness: ${route.keyInHarness}`;
}
