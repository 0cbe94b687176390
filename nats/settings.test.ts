import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../shared/errors.ts';
import { connectNats, connectionOptions, natsSecrets, natsSettings, natsSettingsFromEnv } from './settings.ts';
import { NatsServer } from '../test/support/nats-server.ts';
import { generateBundle } from './auth/bundle.ts';
import { mintReaderCredentials } from './auth/mint.ts';

describe('NATS settings from the environment', () => {
  it('no TCAB_NATS_URL (or an empty one): no NATS', () => {
    expect(natsSettingsFromEnv({})).toBeUndefined();
    expect(natsSettingsFromEnv({ TCAB_NATS_URL: '' })).toBeUndefined();
  });

  it('reads the comma list and every credential; an empty variable counts as unset (an optional Secret key)', () => {
    expect(natsSettingsFromEnv({ TCAB_NATS_URL: 'nats://a:4222, nats://b:4222', TCAB_NATS_USER: 'tcab', TCAB_NATS_PASSWORD: 'sk-fake-pw', TCAB_NATS_TOKEN: '', TCAB_NATS_CREDS: '/var/run/tcab/nats/user.creds', TCAB_NATS_CA: '/etc/tcab/ca.pem' })).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222'],
      user: 'tcab',
      pass: 'sk-fake-pw',
      credsFile: '/var/run/tcab/nats/user.creds',
      caFile: '/etc/tcab/ca.pem',
    });
  });

  it('a flag replaces TCAB_NATS_URL and keeps the credentials of the environment', () => {
    expect(natsSettingsFromEnv({ TCAB_NATS_URL: 'nats://env:4222', TCAB_NATS_TOKEN: 'tok-fake' }, 'nats://flag:4222', '--nats')).toEqual({ servers: ['nats://flag:4222'], token: 'tok-fake' });
  });

  it.each([
    [{ TCAB_NATS_URL: 'nats://a:4222,,nats://b:4222' }, 'TCAB_NATS_URL', /empty server URL/],
    [{ TCAB_NATS_URL: ' , ' }, 'TCAB_NATS_URL', /empty server URL/],
  ])('a bad value names its variable: %j', (env, variable, message) => {
    const thrown = (() => {
      try {
        natsSettingsFromEnv(env);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).field).toBe(variable);
    expect((thrown as Error).message).toMatch(message);
  });

  it('reads the inbox prefix (a run credential may subscribe only to its own); a wildcard or space in it names the variable', () => {
    expect(natsSettingsFromEnv({ TCAB_NATS_URL: 'nats://a:4222', TCAB_NATS_INBOX_PREFIX: '_INBOX_ns_run-1' })).toEqual({ servers: ['nats://a:4222'], inboxPrefix: '_INBOX_ns_run-1' });
    for (const bad of ['_INBOX.*', '_INBOX_>', 'a b', '.a', 'a..b']) expect(() => natsSettingsFromEnv({ TCAB_NATS_URL: 'nats://a:4222', TCAB_NATS_INBOX_PREFIX: bad })).toThrow(/^TCAB_NATS_INBOX_PREFIX: /);
  });

  it('never reads a creds text from the environment (only the dispatcher passes one, in memory)', () => {
    expect(natsSettingsFromEnv({ TCAB_NATS_URL: 'nats://a:4222', TCAB_NATS_CREDS_TEXT: 'x', credsText: 'x' })).toEqual({ servers: ['nats://a:4222'] });
  });

  it('a bad flag value names the flag', () => {
    expect(() => natsSettingsFromEnv({}, ',', '--nats')).toThrow(/^--nats: /);
  });

  it('secrets: the password, the token and what URLs carry, never the user name', () => {
    expect(natsSecrets(natsSettings(['nats://u:sk-fake-url-pw@h:1'], { user: 'tcab', pass: 'sk-fake-pw', token: 'tok-fake' }))).toEqual(['sk-fake-pw', 'tok-fake', 'sk-fake-url-pw']);
  });

  it("secrets: a creds text's NKey seed (the JWT is public)", () => {
    const seed = `SU${'A'.repeat(56)}`; // an obviously fake seed of the right shape
    const creds = `-----BEGIN NATS USER JWT-----\neyJ.fake.jwt\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`;
    expect(natsSecrets(natsSettings('nats://h:1', { credsText: creds }))).toEqual([seed]);
  });
});

describe('one connect policy', () => {
  it('reconnects forever every 250 ms once connected, gives up a silent handshake in 2 s, names the client', () => {
    const options = connectionOptions(natsSettings('nats://127.0.0.1:4222'), { name: 'tcab-driver' });
    expect(options).toMatchObject({ servers: ['nats://127.0.0.1:4222'], name: 'tcab-driver', maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 2000, pingInterval: 5000, maxPingOut: 2 });
    expect(options.authenticator).toBeUndefined();
    expect(options.tls).toBeUndefined();
  });

  it('a .creds file becomes an authenticator that reads the file at each (re)connect; a CA file asks for TLS with it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tcab-nats-settings-'));
    const creds = join(dir, 'user.creds');
    writeFileSync(creds, 'not yet a creds file');
    const options = connectionOptions(natsSettings('tls://127.0.0.1:4222', { credsFile: creds, caFile: join(dir, 'ca.pem') }), { name: 'tcab-events' });
    expect(options.tls).toEqual({ caFile: join(dir, 'ca.pem') });
    expect(typeof options.authenticator).toBe('function');
  });

  it('a creds text becomes an authenticator (and wins over a file); the inbox prefix is passed to nats.js', async () => {
    const { creds, publicKey } = await mintReaderCredentials(await generateBundle());
    const options = connectionOptions(natsSettings('nats://127.0.0.1:4222', { credsText: creds, credsFile: '/nonexistent.creds', inboxPrefix: '_INBOX_r1' }), { name: 'tcab-dispatcher' });
    const authenticate = options.authenticator as (nonce?: string) => { nkey?: string; jwt?: string };
    expect(authenticate('nonce')).toMatchObject({ nkey: publicKey, jwt: expect.stringMatching(/^eyJ/) });
    expect(options.inboxPrefix).toBe('_INBOX_r1');
    expect(connectionOptions(natsSettings('nats://127.0.0.1:4222'), { name: 'x' }).inboxPrefix).toBeUndefined();
  });
});

describe('a server that goes silent on an open connection (its node lost)', () => {
  it('is given up by the pings, not after nats.js\'s minutes: the client reports the stale connection and goes reconnecting', async () => {
    const server = await NatsServer.start();
    const nc = await connectNats(natsSettings(server.url), { name: 'tcab-test' });
    try {
      const seen: string[] = [];
      const stale = (async () => {
        for await (const s of nc.status()) {
          seen.push(s.type);
          if (s.type === 'disconnect' || s.type === 'reconnecting') return s.type;
        }
      })();
      const frozenAt = Date.now();
      server.freeze();
      // No FIN, no RST: only unanswered pings tell. The test's own timeout (60 s) is far below nats.js's default
      // (2 pings 2 minutes apart), so this fails if the ping policy is lost.
      await expect(stale).resolves.toMatch(/disconnect|reconnecting/);
      expect(seen).toContain('staleConnection');
      process.stderr.write(`silent server given up after ${Date.now() - frozenAt} ms\n`);
    } finally {
      server.freeze(false);
      await nc.close();
      await server.dispose();
    }
  }, 60_000);
});
