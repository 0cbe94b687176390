// A Run deleted and re-created under its name, within the stream's duplicate window, on the real node: the run id
// (`<ns>_<name>`) is the same, so before, the driver's message ids (run id + sequence) were the old Run's again,
// JetStream dropped the new Run's events and result as duplicates, and the Run failed "NoResult"; a follower
// replayed the old Run's stream. Here: the second Run Succeeds from its own result, and `tcab events follow`'s
// reader, started after the delete and before the new apply (as the README shows), sees the new Run's messages only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import type { StreamItem } from '../nats/reader.ts';
import type { StubModelServer } from '../driver/stub-models/server.ts';
import type { NatsServer } from '../test/support/nats-server.ts';
import { kubectl, readRunUntil, waitFor } from '../test/cluster/support.ts';
import { startDispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';
import type { DispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';
import type { RunObject } from '../kube/resources.ts';

let fixture: DispatcherFixture;
let ns: string;
let nats: NatsServer;
let stub: StubModelServer;
let logs: string[];

beforeAll(async () => {
  fixture = await startDispatcherFixture('rerun');
  ({ ns, nats, stub, logs } = fixture);
});

afterAll(async () => {
  await fixture?.stop();
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
const apply = async (prompt: string) => {
  const out = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'again' }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt, maxRuntimeSeconds: 120 } }));
  expect(out.code, out.stderr).toBe(0);
};
const finished = async (uid?: string) => {
  const [run] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'again' && (uid === undefined || r.metadata.uid !== uid) && ['Succeeded', 'Failed'].includes(r.status?.phase ?? '')), 120_000, { fieldSelector: 'metadata.name=again' });
  return run!;
};
const seqs = (items: StreamItem[]) => items.flatMap((i) => (i.kind === 'event' && i.seq > 0 ? [i.seq] : []));

describe('a Run deleted and re-created under its name', () => {
  it('succeeds again from its own result, and a follower started before its apply sees only its stream', async () => {
    const runId = `${ns}_again`;
    await apply('first time');
    const first = await finished();
    expect(first.status, logs.join('\n')).toMatchObject({ phase: 'Succeeded' });
    const old = await readRunUntil(nats.url, runId, (all) => all.some((i) => i.kind === 'result'), 30_000);
    expect(seqs(old).length).toBeGreaterThan(0);

    const deleted = await kubectl(['delete', 'run', 'again', '-n', ns, '--wait=true']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => pods.length === 0, 60_000, { labelSelector: 'tcab.dev/run=again' });
    // `tcab events follow <ns>_again` started now, before the new Run exists.
    const following = readRunUntil(nats.url, runId, (all) => all.some((i) => i.kind === 'result'), 150_000);
    following.catch(() => undefined); // awaited below
    await apply('second time');
    const second = await finished(first.metadata!.uid);
    expect(second.status, logs.join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });

    const followed = await following;
    const [result] = followed.filter((i) => i.kind === 'result');
    // The new Run's own stream: its result (started after the new Run was created), each sequence number once, from 1.
    expect(result && result.kind === 'result' && Date.parse(result.result.started_at)).toBeGreaterThanOrEqual(Date.parse(second.metadata!.creationTimestamp as unknown as string));
    const got = seqs(followed);
    expect(got).toEqual([...new Set(got)]);
    expect(got[0]).toBe(1);
    expect(result?.kind === 'result' && result.result.event_count).toBe(got.length);
    // The second prompt reached the model, from the second Run's driver.
    expect(stub.requests.some((r) => JSON.stringify(r.body).includes('second time'))).toBe(true);
  }, 400_000);
});
