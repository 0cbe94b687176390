import { describe, expect, it } from 'vitest';
import { gatewaySettings } from './settings.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');
const ADMIN = 'fake-admin-token-0123456789abcdef';
const files: Record<string, string> = { '/auth/signing-key': `${KEY}\n`, '/auth/admin-token': ADMIN, '/auth/short': 'short', '/auth/weak-key': Buffer.alloc(8).toString('base64') };
const read = (path: string) => {
  if (!Object.hasOwn(files, path)) throw new Error('ENOENT: no such file');
  return files[path]!;
};
const base = { TCAB_GATEWAY_SIGNING_KEY_FILE: '/auth/signing-key', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/auth/admin-token' };

describe('gateway settings', () => {
  it('reads the key and token files (trimmed), the ports (default 8080 and 9090) and the upstreams', () => {
    const s = gatewaySettings({ ...base, TCAB_GATEWAY_UPSTREAMS: '{"anthropic":"http://stub-models.ns.svc:8081"}' }, read);
    expect(s).toMatchObject({ port: 8080, metricsPort: 9090, adminToken: ADMIN, upstreams: { anthropic: 'http://stub-models.ns.svc:8081' }, logLevel: 'info' });
    expect(s.signingKey.equals(Buffer.alloc(32, 7))).toBe(true);
  });

  it.each([
    [{ ...base, TCAB_GATEWAY_SIGNING_KEY_FILE: undefined }, 'TCAB_GATEWAY_SIGNING_KEY_FILE'],
    [{ ...base, TCAB_GATEWAY_SIGNING_KEY_FILE: '/auth/missing' }, 'TCAB_GATEWAY_SIGNING_KEY_FILE'],
    [{ ...base, TCAB_GATEWAY_SIGNING_KEY_FILE: '/auth/weak-key' }, 'TCAB_GATEWAY_SIGNING_KEY_FILE'],
    [{ ...base, TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/auth/short' }, 'TCAB_GATEWAY_ADMIN_TOKEN_FILE'],
    [{ ...base, TCAB_GATEWAY_PORT: 'http' }, 'TCAB_GATEWAY_PORT'],
    [{ ...base, TCAB_GATEWAY_PORT: '9090' }, 'TCAB_GATEWAY_METRICS_PORT'],
    [{ ...base, TCAB_GATEWAY_UPSTREAMS: '{anthropic:' }, 'TCAB_GATEWAY_UPSTREAMS'],
    [{ ...base, TCAB_GATEWAY_UPSTREAMS: '{"anthropic":"file:///etc/passwd"}' }, 'TCAB_GATEWAY_UPSTREAMS'],
    [{ ...base, TCAB_GATEWAY_UPSTREAMS: '{"Bad Name":"http://x"}' }, 'TCAB_GATEWAY_UPSTREAMS'],
    [{ ...base, TCAB_LOG_LEVEL: 'loud' }, 'TCAB_LOG_LEVEL'],
  ])('refuses %o naming %s', (env, variable) => {
    expect(() => gatewaySettings(env, read)).toThrow(variable);
  });

  it('never puts the key or the admin token in an error', () => {
    try {
      gatewaySettings({ ...base, TCAB_GATEWAY_UPSTREAMS: '[' }, read);
    } catch (error) {
      expect(String(error)).not.toContain(KEY);
      expect(String(error)).not.toContain(ADMIN);
      return;
    }
    expect.unreachable();
  });
});
