// The environment every child of the driver starts from. Nothing of the driver's own environment is inherited
// except the variables that describe how this machine reaches the network (CA bundles for a TLS-intercepting
// proxy, proxy settings): without them an install fails with certificate errors. They are configuration, not
// credentials; a proxy URL carrying a password is added to the scrubber by the caller.
import { dirname } from 'node:path';

export const NETWORK_PASSTHROUGH = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Tools that take their own CA bundle variable instead of OpenSSL's (git, curl, python requests, pip).
  'GIT_SSL_CAINFO',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  // Node >= 24: its fetch and http honour the proxy variables only with this (a cluster run's egress proxy).
  'NODE_USE_ENV_PROXY',
] as const;

export function childBaseEnv(driverEnv: Readonly<Record<string, string | undefined>>, prefix: string, home: string, tmp: string): Record<string, string> {
  const env: Record<string, string> = {
    // The per-run prefix first, then the Node that runs the driver (harness CLIs are Node programs), then system.
    PATH: [`${prefix}/bin`, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: home,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
  };
  for (const name of NETWORK_PASSTHROUGH) {
    const value = driverEnv[name];
    if (value) env[name] = value;
  }
  return env;
}

/** Passwords embedded in proxy URLs (http://user:secret@proxy): values the scrubber must know. */
export function proxySecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  for (const name of NETWORK_PASSTHROUGH) {
    const value = env[name];
    if (!value?.includes('@')) continue;
    try {
      const password = new URL(value).password;
      if (password) out.push(decodeURIComponent(password));
    } catch {
      // not a URL
    }
  }
  return out;
}
