import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../shared/errors.ts';
import { checkServerUrls, describeConnectFailure, serverCredentials, shownServers, withoutCredentials } from './server-urls.ts';

describe('NATS URLs shown without their credentials', () => {
  it.each([
    ['nats://user:s3cret@nats.example:4222', 'nats://nats.example:4222'],
    ['tls://tok3n@10.0.0.1:4443', 'tls://10.0.0.1:4443'],
    ['user:s3cret@127.0.0.1:4222', '127.0.0.1:4222'],
    // the last @ ends the credentials: a password may hold one
    ['nats://u:p@ss@host:4222', 'nats://host:4222'],
    ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4222'],
  ])('%s -> %s', (url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });

  it('a seed list is redacted server by server', () => {
    expect(shownServers('nats://a:b@h1:4222, nats://h2:4222,tok@h3:4222')).toBe('nats://h1:4222, nats://h2:4222, h3:4222');
    expect(shownServers(['nats://a:b@h1:4222', 'tok@h3:4222'])).toBe('nats://h1:4222, h3:4222');
  });
});

describe('checkServerUrls', () => {
  it('accepts host:port with or without a scheme, and refuses what is not a URL naming the flag, without the credentials', () => {
    expect(() => checkServerUrls(['nats://127.0.0.1:4222', '127.0.0.1:4222', 'tls://nats.example'], '--nats')).not.toThrow();
    expect(() => checkServerUrls(['nats://user:sk-fake-pw@127.0.0.1:99999'], '--nats')).toThrow(new InvalidInputError('--nats', '"nats://127.0.0.1:99999" is not a NATS server URL (e.g. nats://127.0.0.1:4222)'));
  });
});

describe('serverCredentials', () => {
  it('lists the password or token of each URL, raw and decoded, never the user name', () => {
    expect(serverCredentials(['nats://tcab:sk%2Dfake@h:1', 'nats://h:2', 'tok-fake@h', 'nats://u:p@ss@h'])).toEqual(['sk%2Dfake', 'sk-fake', 'tok-fake', 'p@ss']);
  });
});

describe('describeConnectFailure', () => {
  it('a malformed URL is permanent and says the parse error', () => {
    const error = Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL', input: 'http://tcab:sk-fake-pw@[bad' });
    expect(describeConnectFailure(error)).toEqual({ permanent: true, reason: 'malformed URL (Invalid URL)' });
  });

  it('DNS, refusal and silence are retried, in words a user can act on', () => {
    expect(describeConnectFailure(Object.assign(new Error('getaddrinfo ENOTFOUND nats.invalid'), { code: 'ENOTFOUND' }))).toEqual({ permanent: false, reason: 'host not found (DNS: getaddrinfo ENOTFOUND nats.invalid)' });
    expect(describeConnectFailure(Object.assign(new Error('connection refused'), { name: 'ConnectionError' }))).toEqual({ permanent: false, reason: 'connection refused' });
    expect(describeConnectFailure(Object.assign(new Error('timeout'), { name: 'TimeoutError' }))).toEqual({ permanent: false, reason: 'no answer (timeout)' });
  });

  it('never repeats a credential an error text echoes', () => {
    const failure = describeConnectFailure(new Error("'Authorization Violation' for user tcab with password sk-fake-nats-pw"), ['sk-fake-nats-pw', 'tcab']);
    expect(failure.reason).toBe("'Authorization Violation' for user *** with password ***");
  });
});
