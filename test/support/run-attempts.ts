// A cluster Run's attempts on a real nats-server, as its drivers and the dispatcher publish them (nats/envelope.ts):
// each attempt's events with Tcab-Attempt and a sequence from 1, its result with `attempt: {number, of}`, and the
// cluster's own events (no attempt). For the readers' tests of what follows a result another attempt may follow.
import { afterAll, beforeAll } from 'vitest';
import { NatsServer } from './nats-server.ts';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { clusterEventEnvelope, eventEnvelope, resultEnvelope } from '../../nats/envelope.ts';
import type { Envelope } from '../../nats/envelope.ts';
import { messageHeaders } from '../../nats/publisher.ts';
import { ensureRunStream } from '../../nats/stream.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';

const t = '2026-12-06T09:00:00.000Z';

export function attemptResult(runId: string, number: number, of: number, outcome: RunResult['outcome'], retryable: boolean): RunResult {
  return {
    run_id: runId, harness_slug: 'gg', harness_version: '0.1.0', model: 'm', canonical_model: null, outcome, message: '', auth_mode: 'api-key', sessions: [], session_ids: [],
    exit_code: null, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
    started_at: t, finished_at: t, event_count: 2, attempt: { number, of }, ...(retryable ? { retryable: true } : {}),
  };
}

export class AttemptPublisher {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;

  private constructor(nc: NatsConnection, js: JetStreamClient) {
    this.nc = nc;
    this.js = js;
  }

  static async connect(url: string): Promise<AttemptPublisher> {
    const nc = await connect({ servers: url });
    await ensureRunStream(await jetstreamManager(nc));
    return new AttemptPublisher(nc, jetstream(nc));
  }

  private async publish(envelope: Envelope, payload: unknown): Promise<void> {
    await this.js.publish(envelope.subject, JSON.stringify(payload), { msgID: envelope.msgId, headers: messageHeaders(envelope) });
  }

  /** Attempt `number`'s event `seq` (an agent message "attempt <n> event <seq>"), as its driver publishes it. */
  async event(runId: string, number: number, seq: number): Promise<void> {
    const event: HarnessEvent = { type: 'agent', timestamp: t, message: `attempt ${number} event ${seq}` };
    await this.publish(eventEnvelope(runId, `uid-${number}`, seq, event, number), event);
  }

  /** A cluster event (the dispatcher's, no Tcab-Attempt): the teardown of an attempt's Pod. */
  async clusterEvent(runId: string, message: string): Promise<void> {
    const event: HarnessEvent = { type: 'system', timestamp: new Date().toISOString(), stage: 'teardown', status: 'completed', message };
    await this.publish(clusterEventEnvelope(runId, event), event);
  }

  async result(runId: string, number: number, of: number, outcome: RunResult['outcome'], retryable: boolean): Promise<void> {
    const result = attemptResult(runId, number, of, outcome, retryable);
    await this.publish(resultEnvelope(result, `uid-${number}`, number), result);
  }

  /** An attempt's two events and its result. */
  async attempt(runId: string, number: number, of: number, outcome: RunResult['outcome'], retryable: boolean): Promise<void> {
    await this.event(runId, number, 1);
    await this.event(runId, number, 2);
    await this.result(runId, number, of, outcome, retryable);
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}

/**
 * A nats-server and an AttemptPublisher on it for the whole test file (beforeAll/afterAll registered here); the
 * getters read them once they are up.
 */
export function attemptStreamPerFile(): { server: () => NatsServer; publisher: () => AttemptPublisher } {
  let server: NatsServer | undefined;
  let publisher: AttemptPublisher | undefined;
  beforeAll(async () => {
    server = await NatsServer.start();
    publisher = await AttemptPublisher.connect(server.url);
  });
  afterAll(async () => {
    await publisher?.close();
    await server?.dispose();
  });
  return { server: () => server!, publisher: () => publisher! };
}
