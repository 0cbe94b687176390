// The read decision as a table: each mode, each credential, and what must not count.
import { describe, expect, it } from 'vitest';
import { authoriseRead, cameOverHttps, credentialOf, isCidr } from './read-auth.ts';
import type { ReadPolicy } from './read-auth.ts';
import { signSession } from './read-auth-session.ts';

const READ = 'fake-read-token-111';
const WRITE = 'fake-write-token-222';
const NOW = 1_796_000_000;
const policy = (mode: ReadPolicy['mode'], over: Partial<ReadPolicy> = {}): ReadPolicy => ({ mode, readToken: READ, writeToken: WRITE, nowSeconds: NOW, sessionMaxAgeSeconds: 3600, ...over });
const session = signSession('read-token', READ, NOW + 60);

describe('authoriseRead', () => {
  it.each([
    ['token', {}, undefined],
    ['token', { authorization: `Bearer ${READ}` }, { via: 'bearer', credential: 'read-token' }],
    ['token', { authorization: `Bearer ${WRITE}` }, { via: 'bearer', credential: 'write-token' }],
    ['token', { authorization: 'Bearer nope' }, undefined],
    ['token', { authorization: `Bearer ${READ}`.toUpperCase() }, undefined],
    ['token', { sessionCookie: session }, { via: 'session', credential: 'read-token', expiresAt: NOW + 60 }],
    // A wrong bearer is not rescued by a good cookie.
    ['token', { sessionCookie: session, authorization: 'Bearer nope' }, undefined],
    // The proxy's user counts in proxy mode only (and the caller passes it only from a trusted peer).
    ['token', { trustedProxyUser: 'alice' }, undefined],
    ['proxy', { trustedProxyUser: 'alice' }, { via: 'proxy', user: 'alice' }],
    ['proxy', { trustedProxyUser: '  alice  ' }, { via: 'proxy', user: 'alice' }],
    ['proxy', { trustedProxyUser: '' }, undefined],
    ['proxy', { trustedProxyUser: 'al\nice' }, undefined],
    ['proxy', { trustedProxyUser: 'a'.repeat(257) }, undefined],
    ['proxy', { authorization: `Bearer ${READ}` }, { via: 'bearer', credential: 'read-token' }],
    ['proxy', { sessionCookie: session }, { via: 'session', credential: 'read-token', expiresAt: NOW + 60 }],
    ['open', {}, { via: 'open' }],
    ['open', { authorization: 'Bearer nope' }, { via: 'open' }],
  ] as const)('%s mode, %j -> %j', (mode, request, grant) => {
    expect(authoriseRead(request, policy(mode))).toEqual(grant);
  });

  it('no configured token is matched by an empty one', () => {
    expect(authoriseRead({ authorization: 'Bearer ' }, policy('token', { readToken: '', writeToken: '' }))).toBeUndefined();
    expect(credentialOf('', '', '')).toBeUndefined();
    expect(credentialOf(undefined, READ, WRITE)).toBeUndefined();
  });

  it('a token equal to both is the write token (the stronger), never "read"', () => {
    expect(credentialOf(WRITE, WRITE, WRITE)).toBe('write-token');
  });
});

describe('isCidr', () => {
  it.each(['10.0.0.0/8', '192.168.1.7/32', '0.0.0.0/0', 'fd00::/8', '::1/128', '::ffff:10.0.0.0/104'])('%s is one', (cidr) => expect(isCidr(cidr)).toBe(true));
  it.each(['10.0.0.0', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', 'fd00::/-1', 'example.com/8', '10.0.0.0/8 ', '', '/8', '10.0.0.0/08x'])('%j is not', (cidr) => expect(isCidr(cidr)).toBe(false));
});

describe('cameOverHttps', () => {
  it.each([
    [true, false, undefined, true],
    [false, true, 'https', true],
    [false, true, 'HTTPS', true],
    [false, true, 'https, http', true],
    [false, true, 'http, https', false],
    [false, true, ['https', 'http'], true],
    [false, false, 'https', false],
    [false, true, undefined, false],
    [false, true, 'wss', false],
  ] as const)('TLS %s, trusted peer %s, X-Forwarded-Proto %j -> %s', (encrypted, trusted, proto, https) => {
    expect(cameOverHttps(encrypted, trusted, proto as string | string[] | undefined)).toBe(https);
  });
});
