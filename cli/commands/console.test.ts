import { describe, expect, it } from 'vitest';
import { READER_INBOX_PREFIX } from '../../nats/auth/permissions.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { consoleNatsSettings, consoleToken } from './console.ts';

describe('consoleToken', () => {
  it('takes --token over TCAB_CONSOLE_TOKEN, and generates a fresh random one when neither is set', () => {
    expect(consoleToken('flag-token', { TCAB_CONSOLE_TOKEN: 'env-token' })).toEqual({ token: 'flag-token', generated: false });
    expect(consoleToken(undefined, { TCAB_CONSOLE_TOKEN: 'env-token' })).toEqual({ token: 'env-token', generated: false });
    const a = consoleToken(undefined, {});
    const b = consoleToken(undefined, {});
    expect(a.generated).toBe(true);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.token).not.toBe(b.token);
  });

  it('refuses an empty token (it would let nobody write, silently)', () => {
    expect(() => consoleToken('', {})).toThrow(InvalidInputError);
    expect(() => consoleToken(undefined, { TCAB_CONSOLE_TOKEN: ' ' })).toThrow(InvalidInputError);
  });
});

describe('consoleNatsSettings', () => {
  it('reads with a reader credential: --creds, and the reader inbox prefix unless one is set', () => {
    expect(consoleNatsSettings({ nats: 'nats://127.0.0.1:4222', creds: '/tmp/reader.creds' }, {})).toMatchObject({ servers: ['nats://127.0.0.1:4222'], credsFile: '/tmp/reader.creds', inboxPrefix: READER_INBOX_PREFIX });
    expect(consoleNatsSettings({ nats: 'nats://a:4222,nats://b:4222' }, { TCAB_NATS_INBOX_PREFIX: 'mine' })).toMatchObject({ servers: ['nats://a:4222', 'nats://b:4222'], inboxPrefix: 'mine' });
  });

  it('names --nats when the URL is not one', () => {
    expect(() => consoleNatsSettings({ nats: 'not a url' }, {})).toThrow(/--nats/);
  });
});
