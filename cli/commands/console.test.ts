import { describe, expect, it } from 'vitest';
import { READER_INBOX_PREFIX } from '../../nats/auth/permissions.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { consoleNatsSettings, consoleReadToken, consoleToken, servingLines } from './console.ts';

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

describe('consoleReadToken', () => {
  it('takes --read-token over TCAB_CONSOLE_READ_TOKEN; none given is none (reads then take the write token)', () => {
    expect(consoleReadToken('flag-read', { TCAB_CONSOLE_READ_TOKEN: 'env-read' }, 'write')).toBe('flag-read');
    expect(consoleReadToken(undefined, { TCAB_CONSOLE_READ_TOKEN: 'env-read' }, 'write')).toBe('env-read');
    expect(consoleReadToken(undefined, {}, 'write')).toBe('');
  });

  it('refuses an empty one and one equal to the write token (it would not be read-only)', () => {
    expect(() => consoleReadToken('', {}, 'write')).toThrow(/--read-token: must not be empty/);
    expect(() => consoleReadToken(undefined, { TCAB_CONSOLE_READ_TOKEN: ' ' }, 'write')).toThrow(InvalidInputError);
    expect(() => consoleReadToken('same', {}, 'same')).toThrow(/must differ from the write token/);
  });
});

describe('servingLines', () => {
  const scope = 'Runs of every namespace, context c, NATS nats://127.0.0.1:4222';
  it('a generated write token: printed once, and a login URL carrying it in the fragment', () => {
    expect(servingLines('http://127.0.0.1:8080', scope, { token: 'gen_TOKEN-1', generated: true }, '')).toBe(
      `tcab console: http://127.0.0.1:8080/ (${scope})\ntcab console: log in: http://127.0.0.1:8080/#token=gen_TOKEN-1\ntcab console: write token (cancel, caps): gen_TOKEN-1\n`,
    );
  });

  it('tokens the operator gave are never echoed', () => {
    const lines = servingLines('http://127.0.0.1:8080', scope, { token: 'fake-given-write', generated: false }, 'fake-given-read');
    expect(lines).not.toContain('fake-given');
    expect(lines).toContain('log in with the write token you gave or the read token');
  });
});
