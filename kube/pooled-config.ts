// client-node (2.0.1) gives every request a new undici Agent, so every request opens a new TLS connection to the
// apiserver (and the apiserver pays a handshake for it too). Under a burst of claims that was the largest cost in
// the dispatcher's process: a CPU profile of the 10,000-Run bench spent more time in TLS setup
// (SecureContext, TLSSocket._start, getPeerCertificate) than in everything the dispatcher itself does.
// This config hands every request of one context the same keep-alive Agent instead.
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestContext } from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class PooledKubeConfig extends KubeConfig {
  /**
   * One Agent per context (cluster + user): its TLS material is the context's. Tokens travel in headers, set per
   * request as before, so a rotated ServiceAccount token is still picked up; a rotated CA needs a restart.
   */
  private readonly agents = new Map<string, Dispatcher>();

  constructor(base: KubeConfig) {
    super();
    this.loadFromOptions({ clusters: base.clusters, users: base.users, contexts: base.contexts, currentContext: base.currentContext });
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return; // plain http (tests with skipTLSVerify and no TLS material): nothing to reuse
    const key = this.getCurrentContext();
    const pooled = this.agents.get(key);
    if (pooled) context.setDispatcher(pooled);
    else this.agents.set(key, fresh);
  }
}
