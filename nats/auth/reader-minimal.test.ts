// The reader's permissions against a real nats-server: `tcab events follow` (nats/reader.ts) works with them, and
// fails (an error, not a wait forever) without any one of the entries on its path. The others (consumer info/delete for nats.js's ordered
// consumer recovery, direct get for a console) are named in permissions.ts and kept read-only by the tables there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { AuthNats, agentEvent, rejection, runResult } from '../../test/support/nats-auth.ts';
import { readRunStream } from '../reader.ts';
import { RunStream } from '../result-consumer.ts';
import { natsSettings } from '../settings.ts';
import { mintUser } from './mint.ts';
import { readerPermissions } from './permissions.ts';
import type { UserPermissions } from './permissions.ts';

let nats: AuthNats;
let dispatcher: RunStream;
beforeAll(async () => {
  nats = await AuthNats.start();
  dispatcher = await RunStream.connect(await nats.dispatcherSettings());
  const sink = new NatsSink({ settings: (await nats.runSettings('r1')).settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
  sink.event({ runId: 'r1', seq: 1, event: agentEvent('hello') });
  sink.result(runResult('r1', 'done', 1));
  await sink.close();
});
afterAll(async () => {
  await dispatcher?.close();
  await nats?.dispose();
});

async function follow(permissions: UserPermissions): Promise<string[]> {
  const { creds } = await mintUser(nats.bundle.account.seed, 'reader', permissions);
  const kinds: string[] = [];
  for await (const item of readRunStream({ settings: natsSettings(nats.server.url, { credsText: creds }), runId: 'r1', replay: true, untilResult: true })) kinds.push(item.kind);
  return kinds;
}

const full = readerPermissions();
const onPath: Array<['pub' | 'sub', string, RegExp]> = [
  ['pub', '$JS.API.INFO', /Permissions Violation for Publish to "\$JS\.API\.INFO"/],
  ['pub', '$JS.API.STREAM.INFO.TCAB_RUNS', /Permissions Violation for Publish to "\$JS\.API\.STREAM\.INFO\.TCAB_RUNS"/],
  ['pub', '$JS.API.CONSUMER.CREATE.TCAB_RUNS.*.>', /Permissions Violation for Publish to "\$JS\.API\.CONSUMER\.CREATE\.TCAB_RUNS\.[^.]+\.tcab\.run\.r1\.>"/],
  ['pub', '$JS.API.CONSUMER.MSG.NEXT.TCAB_RUNS.*', /Permissions Violation for Publish to "\$JS\.API\.CONSUMER\.MSG\.NEXT\.TCAB_RUNS\./],
  ['sub', '_TCAB_READER_INBOX.>', /Permissions Violation for Subscription to "_TCAB_READER_INBOX\./],
];

describe("the reader's permissions", () => {
  it('are enough for `tcab events follow`', async () => {
    expect(await follow(full)).toEqual(['event', 'result']);
  });

  it('name each entry on that path here', () => {
    for (const [kind, entry] of onPath) expect(full[kind].allow).toContain(entry);
  });

  it.each(onPath)('fail it without %s %s', async (kind, entry, refusal) => {
    // An allow list left empty would mean "everything" to the server: a subject nothing uses stands in.
    const rest = full[kind].allow.filter((p) => p !== entry);
    const cut = { ...full, [kind]: { ...full[kind], allow: rest.length > 0 ? rest : ['tcab.nothing'] } };
    expect(await rejection(follow(cut))).toMatch(refusal);
  });
});
