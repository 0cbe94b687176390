import { describe, expect, it } from 'vitest';
import { describeConnectFailure, serverCredentials } from './nats-target.ts';

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
