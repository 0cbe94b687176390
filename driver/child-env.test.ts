// A harness's base environment inherits only the network variables, never the driver's own settings or secrets.
import { describe, expect, it } from 'vitest';
import { NETWORK_PASSTHROUGH, childBaseEnv, proxySecrets } from './child-env.ts';

describe('childBaseEnv', () => {
  const podEnv = {
    PATH: '/usr/bin',
    TCAB_RUN_ID: 'ns_run',
    TCAB_RUN_SPEC: '{"prompt":"secret prompt"}',
    TCAB_NATS_URL: 'nats://tcab:sk-fake-nats-url-pass@nats:4222',
    TCAB_NATS_PASSWORD: 'sk-fake-nats-password',
    TCAB_NATS_TOKEN: 'sk-fake-nats-token',
    // Issue 22: the run's own NATS user, a root-only file in the Pod, and its inbox prefix.
    TCAB_NATS_CREDS: '/var/run/tcab/nats/nats.creds',
    TCAB_NATS_INBOX_PREFIX: '_INBOX_ns_run',
    TCAB_CREDENTIALS_DIR: '/var/run/tcab/credentials',
    ANTHROPIC_API_KEY: 'sk-ant-fake-key',
    NODE_EXTRA_CA_CERTS: '/etc/tcab/extra-ca/ca.crt',
    SSL_CERT_FILE: '/tmp/.tcab-ca/ca-certificates.crt',
    HTTPS_PROXY: 'http://user:sk-fake-proxy-pass@proxy:3128',
  };

  it('carries no TCAB_ variable and no key: only its own basics and the network pass-through', () => {
    const env = childBaseEnv(podEnv, '/p', '/h', '/t');
    expect(Object.keys(env).filter((k) => k.startsWith('TCAB_'))).toEqual([]);
    expect(JSON.stringify(env)).not.toMatch(/sk-fake-nats|sk-ant-fake|secret prompt|nats\.creds|_INBOX_/);
    expect(env).toMatchObject({ HOME: '/h', TMPDIR: '/t', NODE_EXTRA_CA_CERTS: '/etc/tcab/extra-ca/ca.crt', SSL_CERT_FILE: '/tmp/.tcab-ca/ca-certificates.crt', HTTPS_PROXY: podEnv.HTTPS_PROXY });
    expect(NETWORK_PASSTHROUGH.some((name) => name.startsWith('TCAB_'))).toBe(false);
  });

  it('a proxy password it passes on is handed to the scrubber', () => {
    expect(proxySecrets(podEnv)).toEqual(['sk-fake-proxy-pass']);
  });
});
