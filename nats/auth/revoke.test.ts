// A run credential's end against a real nats-server in operator mode: once expired, the server disconnects it and
// refuses it; once revoked (the account JWT pushed through the system account), the same, and a later revocation
// or a server restart does not bring an earlier one back. Waits are on the server's own signals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { AuthNats, nextServerError, rejection } from '../../test/support/nats-auth.ts';
import { NatsServer } from '../../test/support/nats-server.ts';
import { connectNats, natsSettings } from '../settings.ts';
import type { NatsSettings } from '../settings.ts';
import { STREAM_NAME, ensureRunStream } from '../stream.ts';
import { MAX_RUN_CREDENTIAL_LIFETIME_MS, mintRunCredentials } from './mint.ts';
import { NatsAccountAdmin, nextRevocations, revokeRunUser } from './revoke.ts';

describe('nextRevocations', () => {
  const now = new Date('2026-12-05T12:00:00Z');
  const nowS = now.getTime() / 1000;
  const life = MAX_RUN_CREDENTIAL_LIFETIME_MS / 1000;
  it("dates each entry at its credential's expiry, or the latest it can be when unknown; keeps the live entries", () => {
    expect(nextRevocations({ UA: nowS + 10 }, [{ publicKey: 'UB', expiresAt: new Date(now.getTime() + 3600_000) }, { publicKey: 'UC' }], now)).toEqual({ UA: nowS + 10, UB: nowS + 3600, UC: nowS + life });
  });
  it('never dates one in the past nor beyond the longest credential life', () => {
    expect(nextRevocations({}, [{ publicKey: 'UB', expiresAt: new Date(now.getTime() - 5000) }], now)).toEqual({ UB: nowS });
    expect(nextRevocations({}, [{ publicKey: 'UB', expiresAt: new Date(now.getTime() + 2 * MAX_RUN_CREDENTIAL_LIFETIME_MS) }], now)).toEqual({ UB: nowS + life });
  });
  it('drops entries whose date passed (the credential they named has expired)', () => {
    expect(nextRevocations({ UOLD: nowS - 1, UEDGE: nowS }, [{ publicKey: 'UB' }], now)).toEqual({ UEDGE: nowS, UB: nowS + life });
  });
});

let nats: AuthNats;
let observer: NatsConnection;
beforeAll(async () => {
  nats = await AuthNats.start();
  observer = await connectNats(await nats.dispatcherSettings(), { name: 'observer' });
  await ensureRunStream(await jetstreamManager(observer));
});
afterAll(async () => {
  await observer?.close();
  await nats?.dispose();
});

async function storedOn(subject: string): Promise<number> {
  const info = await (await jetstreamManager(observer)).streams.info(STREAM_NAME, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

const publishResult = (nc: NatsConnection, runId: string) => jetstream(nc, { timeout: 1000 }).publish(`tcab.run.${runId}.result`, '{}');

describe('an expired run credential', () => {
  it('is disconnected by the server at its expiry (the server\'s own timer, at the JWT\'s exp)', async () => {
    const { settings } = await nats.runSettings('expiring', new Date(Date.now() + 3000));
    const nc = await connectNats(settings, { name: 'expiring' });
    try {
      await expect(publishResult(nc, 'expiring')).resolves.toMatchObject({ stream: STREAM_NAME });
      expect(await nextServerError(nc)).toMatch(/expired/i);
    } finally {
      await nc.close();
    }
  });

  it('cannot connect, so cannot publish; nothing lands', async () => {
    // Minted an hour ago for a run that ended a minute ago (expiry has one-second granularity at the server).
    const { settings } = await nats.runSettings('expired', new Date(Date.now() - 60_000), new Date(Date.now() - 3600_000));
    expect(await rejection(connectNats(settings, { name: 'expired' }))).toMatch(/Authorization Violation/);
    expect(await storedOn('tcab.run.expired.>')).toBe(0);
  });
});

describe('a revoked run credential', () => {
  let admin: NatsAccountAdmin;
  beforeAll(async () => {
    admin = await NatsAccountAdmin.connect(await nats.dispatcherSettings(), nats.bundle);
  });
  afterAll(async () => {
    await admin?.close();
  });

  const expiresAt = () => new Date(Date.now() + 3600_000);

  async function connected(runId: string): Promise<{ nc: NatsConnection; settings: NatsSettings; publicKey: string }> {
    const { settings, publicKey } = await nats.runSettings(runId, expiresAt());
    const nc = await connectNats(settings, { name: runId });
    await publishResult(nc, runId);
    return { nc, settings, publicKey };
  }

  it('is disconnected at once and cannot reconnect; other runs are untouched; a second revocation keeps the first', async () => {
    const first = await connected('revoked-1');
    const second = await connected('revoked-2');
    try {
      const disconnected = nextServerError(first.nc);
      await revokeRunUser(admin, first.publicKey, { expiresAt: expiresAt() }); // an entry dated in the future
      expect(await disconnected).toMatch(/revoked|Authorization Violation/i);
      expect(await rejection(connectNats(first.settings, { name: 'again' }))).toMatch(/Authorization Violation/);
      await expect(publishResult(second.nc, 'revoked-2')).resolves.toMatchObject({ stream: STREAM_NAME });

      await revokeRunUser(admin, second.publicKey); // expiry unknown
      expect(await rejection(connectNats(second.settings, { name: 'again' }))).toMatch(/Authorization Violation/);
      expect(await rejection(connectNats(first.settings, { name: 'again' }))).toMatch(/Authorization Violation/);
    } finally {
      await first.nc.close();
      await second.nc.close();
    }
  });

  it('a burst of revocations all take effect (they are batched into few account updates, none lost)', async () => {
    const runs = await Promise.all(['burst-1', 'burst-2', 'burst-3', 'burst-4', 'burst-5'].map((id) => nats.runSettings(id, expiresAt())));
    await Promise.all(runs.map((r) => revokeRunUser(admin, r.publicKey, { expiresAt: expiresAt() })));
    for (const r of runs) expect(await rejection(connectNats(r.settings, { name: 'burst' }))).toMatch(/Authorization Violation/);
  });

  it('stays revoked across a server restart (the resolver keeps the pushed account JWT over the preloaded one)', async () => {
    const run = await connected('revoked-restart');
    await run.nc.close();
    await revokeRunUser(admin, run.publicKey);
    await nats.server.stop();
    await nats.server.resume();
    expect(await rejection(connectNats(run.settings, { name: 'after restart' }))).toMatch(/Authorization Violation/);
    const fresh = await connectNats((await nats.runSettings('fresh')).settings, { name: 'fresh' });
    await expect(publishResult(fresh, 'fresh')).resolves.toMatchObject({ stream: STREAM_NAME });
    await fresh.close();
  });
});

describe('an account JWT that would outgrow the max payload', () => {
  it('is not pushed: the revocation fails saying why (and the server keeps the last good one)', async () => {
    const bundle = nats.bundle;
    const small = await NatsServer.start({ auth: bundle, maxPayload: 4096 });
    const admin = await NatsAccountAdmin.connect(natsSettings(small.url), bundle);
    try {
      const keys = await Promise.all(Array.from({ length: 60 }, (_, i) => mintRunCredentials(bundle, `big-${i}`, new Date(Date.now() + 3600_000))));
      await revokeRunUser(admin, keys[0]!.publicKey);
      const error = await rejection(Promise.all(keys.slice(1).map((k) => revokeRunUser(admin, k.publicKey))));
      expect(error).toMatch(/the TCAB account JWT with 60 revocations is \d+ bytes, over the server's max payload \(4096\)/);
      const first = natsSettings(small.url, { credsText: keys[0]!.creds, inboxPrefix: keys[0]!.inboxPrefix });
      expect(await rejection(connectNats(first, { name: 'first' }))).toMatch(/Authorization Violation/);
    } finally {
      await admin.close();
      await small.dispose();
    }
  });
});
