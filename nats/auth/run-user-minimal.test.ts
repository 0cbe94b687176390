// The run user's permissions are exactly what the driver uses, each one proven against a real nats-server: the
// driver's steps (nats/publisher.ts: make sure of the stream, hold for the Pod's start by direct get and a core
// subscription, publish with JetStream acks, send its progress on the core subject) all work with the full set, and each step fails when any one entry of
// the set is taken away. Called directly, not through the sink, whose retries would hide a failing step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunPublisher } from '../publisher.ts';
import { RunStream } from '../result-consumer.ts';
import { natsSettings } from '../settings.ts';
import { resultEnvelope } from '../envelope.ts';
import { AuthNats, runResult, startEvent } from '../../test/support/nats-auth.ts';
import { mintUser } from './mint.ts';
import { runInboxPrefix, runUserPermissions } from './permissions.ts';
import type { UserPermissions } from './permissions.ts';

let nats: AuthNats;
let dispatcher: RunStream;
beforeAll(async () => {
  nats = await AuthNats.start();
  dispatcher = await RunStream.connect(await nats.dispatcherSettings());
});
afterAll(async () => {
  await dispatcher?.close();
  await nats?.dispose();
});

/** The driver's steps for one run with these permissions: 'ok', or the first step that failed and why. */
async function driverSteps(runId: string, permissions: UserPermissions): Promise<string> {
  const { creds } = await mintUser(nats.bundle.account.seed, `run-${runId}`, permissions);
  const publisher = await RunPublisher.connect(natsSettings(nats.server.url, { credsText: creds, inboxPrefix: runInboxPrefix(runId) }));
  const step = async (name: string, work: () => Promise<unknown>) => {
    try {
      return await work();
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
    }
  };
  try {
    await step('ensureStream', () => publisher.ensureStream());
    // Nothing stored yet: the hold looks (direct get), then waits live (core subscription) for the dispatcher's relay.
    const held = await step('waitForPodStart', () => publisher.waitForPodStart(runId, Date.now() + 60_000, () => void dispatcher.publish(runId, [startEvent('completed')])));
    if (held !== 'seen') return `waitForPodStart: ${String(held)}`;
    await step('publish', () => publisher.publish(resultEnvelope(runResult(runId, 'done', 0), 'a1'), '{}'));
    await step('progress', () => publisher.publishProgress(runId, '{}'));
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  } finally {
    await publisher.close();
  }
}

function without(permissions: UserPermissions, kind: 'pub' | 'sub', entry: string): UserPermissions {
  return { ...permissions, [kind]: { ...permissions[kind], allow: permissions[kind].allow.filter((p) => p !== entry) } };
}

describe("the run user's permissions", () => {
  it('are enough for every step of the driver', async () => {
    expect(await driverSteps('full', runUserPermissions('full'))).toBe('ok');
  });

  const full = runUserPermissions('cut');
  const entries = [...full.pub.allow.map((e) => ['pub', e] as const), ...full.sub.allow.map((e) => ['sub', e] as const)];
  // Which step needs each entry, as nats.js really uses it.
  const needs: Record<string, RegExp> = {
    'tcab.run.cut.>@pub': /^publish: .*Permissions Violation for Publish to "tcab\.run\.cut\.result"/,
    '$JS.API.INFO@pub': /^ensureStream: .*Permissions Violation for Publish to "\$JS\.API\.INFO"/,
    '$JS.API.STREAM.INFO.TCAB_RUNS@pub': /^ensureStream: .*Permissions Violation for Publish to "\$JS\.API\.STREAM\.INFO\.TCAB_RUNS"/,
    '$JS.API.DIRECT.GET.TCAB_RUNS@pub': /^waitForPodStart: .*Permissions Violation for Publish to "\$JS\.API\.DIRECT\.GET\.TCAB_RUNS"/,
    'tcab.progress.cut@pub': /^progress: .*Permissions Violation for Publish to "tcab\.progress\.cut"/,
    'tcab.run.cut.>@sub': /^waitForPodStart: .*Permissions Violation for Subscription to "tcab\.run\.cut\.event\.system"/,
    '_INBOX_cut.>@sub': /^ensureStream: .*Permissions Violation for Subscription to "_INBOX_cut\./,
  };

  it('are each named here (a new entry needs its own proof)', () => {
    expect(entries.map(([kind, entry]) => `${entry}@${kind}`).sort()).toEqual(Object.keys(needs).sort());
  });

  it.each(entries)('fail a driver step without %s %s', async (kind, entry) => {
    // A fresh run id each time: the stream must not already hold a start event from an earlier case.
    const runId = `cut-${kind}-${entries.findIndex(([k, e]) => k === kind && e === entry)}`;
    const cut = without(runUserPermissions(runId), kind, entry.replaceAll('cut', runId));
    expect(await driverSteps(runId, cut)).toMatch(new RegExp(needs[`${entry}@${kind}`]!.source.replaceAll('cut', runId)));
  });
});
