// The gateway's upstream requests honour HTTP(S)_PROXY / NO_PROXY when set (a cluster's egress proxy, a
// workstation behind a corporate proxy): undici's EnvHttpProxyAgent, with the gateway's timeouts.
import { EnvHttpProxyAgent } from 'undici';
import type { Dispatcher } from 'undici';

/** undefined when no proxy variable is set: the gateway's own Agent is used. */
export function proxyDispatcherFor(env: Readonly<Record<string, string | undefined>>, timeoutMs = 600_000): Dispatcher | undefined {
  const proxy = env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy;
  if (!proxy) return undefined;
  return new EnvHttpProxyAgent({
    httpProxy: env.HTTP_PROXY ?? env.http_proxy ?? proxy,
    httpsProxy: proxy,
    noProxy: env.NO_PROXY ?? env.no_proxy,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}
