// First result wins, against the test control plane, a real nats-server and a real driver Pod on the real node: a
// gg Run Succeeds from its driver's result; then a forged second result on its result subject, the true result
// published again (a redelivery), and a result for a Run that was cancelled before it ever ran. The forged and the
// late result are refused: the Runs' statuses are unchanged, each refusal is a ResultRejected Event on its Run and
// counted in tcab_results_rejected_total, and every message is acked (nothing is redelivered). The redelivery is
// not a refusal.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { resultSubject } from '../nats/envelope.ts';
import { RESULTS_CONSUMER } from '../nats/result-consumer.ts';
import { connectNats, natsSettings } from '../nats/settings.ts';
import { STREAM_NAME } from '../nats/stream.ts';
import type { RunResult } from '../shared/run.ts';
import { kubectl, readRunUntil, waitFor } from '../test/cluster/support.ts';
import type { NatsServer } from '../test/support/nats-server.ts';
import type { Dispatcher } from './controller/dispatcher.ts';
import type { DispatcherMetrics } from './controller/metrics.ts';
import type { RunObject } from '../kube/resources.ts';
import { startDispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';
import type { DispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';

let fixture: DispatcherFixture;
let ns: string;
let nats: NatsServer;
let dispatcher: Dispatcher;
let metrics: DispatcherMetrics;
let forger: NatsConnection;
let logs: string[];

beforeAll(async () => {
  fixture = await startDispatcherFixture('first-result');
  ({ ns, nats, dispatcher, metrics, logs } = fixture);
  // Without per-run credentials (this server has no auth) anyone may publish: the dispatcher's own rule must hold.
  forger = await connectNats(natsSettings(nats.url), { name: 'forger' });
});

afterAll(async () => {
  await forger?.close();
  await fixture?.stop();
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
const apply = async (name: string, spec: Record<string, unknown> = {}) => {
  const run = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120, ...spec } };
  const out = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(run));
  expect(out.code, out.stderr).toBe(0);
};
const final = async (name: string) => {
  const [run] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => ['Succeeded', 'Failed', 'Cancelled'].includes(r.status?.phase ?? '')), 150_000, { fieldSelector: `metadata.name=${name}` });
  return run!;
};
const readRun = async (name: string) => JSON.parse((await kubectl(['get', 'run', name, '-n', ns, '-o', 'json'])).stdout) as RunObject;
const rejections = async () => Object.fromEntries((await metrics.resultsRejected.get()).values.map((v) => [v.labels.reason, v.value]));
/** Published as a driver would: on the run's result subject, with a message id of its own (not JetStream's duplicate). */
const publish = async (result: RunResult, msgId: string) => (await jetstream(forger).publish(resultSubject(result.run_id), JSON.stringify(result), { msgID: msgId })).seq;

describe('first result wins', () => {
  it('refuses a forged second result and a late one (status unchanged, Event, metric, acked); a redelivery is not refused', async () => {
    await apply('honest');
    await apply('early', { cancel: true });
    const honest = await final('honest');
    expect(honest.status, logs.join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
    const early = await final('early');
    expect(early.status).toMatchObject({ phase: 'Cancelled', outcome: 'cancelled' });
    expect(await rejections()).toEqual({ duplicate: 0, late: 0, stale: 0 });

    const items = await readRunUntil(nats.url, `${ns}_honest`, (all) => all.some((i) => i.kind === 'result'), 30_000);
    const truth = items.find((i) => i.kind === 'result');
    if (truth?.kind !== 'result') throw new Error('no result on the stream');
    expect(truth.result.attempt).toEqual({ number: 1, of: 3 }); // the driver says which attempt of how many (spec.retries 2)
    await publish(truth.result, 'redelivered-copy');
    const forged: RunResult = { ...truth.result, outcome: 'harness_failed', message: 'forged', actual_cost_usd: 999, session_ids: ['forged'] };
    await publish(forged, 'forged');
    const lastSeq = await publish({ ...truth.result, run_id: `${ns}_early`, outcome: 'succeeded', message: 'too late' }, 'late');

    const events = await waitFor<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, (all) => all.length >= 2, 60_000, { fieldSelector: 'reason=ResultRejected' });
    const byRun = Object.fromEntries(events.map((e) => [e.involvedObject.name, e]));
    expect(Object.keys(byRun).sort(), JSON.stringify(events)).toEqual(['early', 'honest']);
    expect(byRun.honest).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Run', uid: honest.metadata!.uid }, message: expect.stringContaining('second, different result') });
    expect(byRun.early).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Run', uid: early.metadata!.uid }, message: expect.stringContaining('ended Cancelled (cancelled) without one') });
    expect(byRun.honest!.message).not.toContain('forged');
    // The redelivered copy came before the forgery on the same run id: it was judged, and not counted.
    expect(await rejections()).toEqual({ duplicate: 1, late: 1, stale: 0 });
    expect(events).toHaveLength(2);

    expect((await readRun('honest')).status).toEqual(honest.status);
    expect((await readRun('early')).status).toEqual(early.status);
    // Acked, not left to come back after ack_wait: the consumer's floor is past the last one, nothing pending.
    const jsm = await jetstreamManager(forger);
    await vi.waitFor(async () => {
      const info = await jsm.consumers.info(STREAM_NAME, RESULTS_CONSUMER);
      expect(info.num_ack_pending).toBe(0);
      expect(info.ack_floor.stream_seq).toBeGreaterThanOrEqual(lastSeq);
      expect(info.num_redelivered).toBe(0);
    }, { timeout: 10_000, interval: 100 });
    expect(dispatcher.retained().results).toBe(0);
  }, 400_000);
});
