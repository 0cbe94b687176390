// Which provider+model a Run's requests reach through the model gateway (issue 34), so a throttled one's Runs can be
// held (throttle.ts). Pure: the claim pass gives the harness's manifest for the Run's model (getHarness +
// manifestForModel) and the key variable auth resolution chose (clusterAvailability's keyVar).
import { gatewayProviderFor, keyRoutesOf } from '../../shared/gateway-route.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';

export interface RunTarget {
  /** Gateway providers the Run's key can go to: one when the key variable is known. */
  providers: string[];
  /**
   * The model ids the provider may see for the Run: the Run's model as written, and when it is prefixed
   * (`anthropic/claude-sonnet-4-5`, `openrouter/qwen/qwen3-coder`) the part after the last `/` too, which is the id a
   * provider's own wire names. A provider's dated variant (`claude-sonnet-4-5-20250929`) is another id: not matched.
   */
  models: string[];
}

/** The ids the provider may see for a Run's model. */
export function wireModelsOf(model: string): string[] {
  const tail = model.slice(model.lastIndexOf('/') + 1);
  return tail && tail !== model ? [model, tail] : [model];
}

/**
 * The Run's provider+model at the gateway, or undefined when its key does not go through the gateway (subscription
 * mode, a key in the harness, no API-key mode): the gateway sees none of its requests, so nothing holds it.
 * `keyVariable` undefined (auth not resolved to an API key): every provider the harness's keys can go to.
 */
export function runTargetOf(manifest: HarnessManifest, model: string, keyVariable: string | undefined): RunTarget | undefined {
  let providers: string[];
  if (keyVariable !== undefined) {
    const route = gatewayProviderFor(manifest, keyVariable);
    if (!('provider' in route)) return undefined;
    providers = [route.provider];
  } else {
    const routes = keyRoutesOf(manifest);
    if (!routes || !('gateway' in routes)) return undefined;
    providers = routes.gateway;
  }
  return { providers, models: wireModelsOf(model) };
}
