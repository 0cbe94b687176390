// The dispatcher settings every in-process dispatcher cluster test shares to run gg driver Pods on the real node:
// the real driver image, a small Pod, NATS and the stub model reached from the Pod network, and the provider key
// from the namespace's `provider-keys` Secret (key `anthropic`: gg signs in with it). A test adds what it varies.
import { podUrl, realNode } from './real-node-context.ts';

export interface GgDriverEnvOptions {
  namespace: string;
  /** The NATS server's host URL (made reachable from Pods here), or one already reachable from Pods. */
  natsUrl: string;
  /** The stub model's host URL (made reachable from Pods here). */
  stubUrl: string;
  /** NATS is already a Pod-reachable URL (podUrl applied by the caller). */
  natsReachable?: boolean;
}

export async function ggDriverEnv(options: GgDriverEnvOptions): Promise<Record<string, string>> {
  return {
    TCAB_NAMESPACE: options.namespace,
    TCAB_DRIVER_IMAGE: realNode().images.driver,
    TCAB_DRIVER_CPU: '100m',
    TCAB_DRIVER_MEMORY: '512Mi',
    TCAB_NATS_URL: options.natsReachable ? options.natsUrl : await podUrl(options.natsUrl),
    TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'provider-keys', key: 'anthropic' }]),
    TCAB_DRIVER_ENV: JSON.stringify({ TCAB_BASE_URL_GG: await podUrl(options.stubUrl) }),
  };
}
