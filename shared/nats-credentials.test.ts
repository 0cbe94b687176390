import { describe, expect, it } from 'vitest';
import { shownServers, withoutCredentials } from './nats-credentials.ts';

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
  });
});
