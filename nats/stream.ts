// The one JetStream stream every run is published to, and the one way to make sure it exists: the driver, the
// dispatcher and readers (`tcab events follow` started before any run) all call ensureRunStream, so whichever
// comes first creates it, with the same definition.
import { JetStreamApiCodes, JetStreamApiError, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { ALL_RUNS_SUBJECT } from './envelope.ts';

export const STREAM_NAME = 'TCAB_RUNS';

/** Retried publishes carry `Nats-Msg-Id`; within this window the server drops the repeat. */
export const DUPLICATE_WINDOW_MS = 15 * 60_000;

/**
 * The stream's definition: every run's subjects, on file (a restarted server keeps what it had), the dedup window,
 * and direct get (a driver looks up its Pod's start events without making a consumer: pod-start.ts).
 */
export function runStreamConfig(duplicateWindowMs = DUPLICATE_WINDOW_MS, replicas = 1): Partial<StreamConfig> & { name: string; subjects: string[] } {
  return { name: STREAM_NAME, subjects: [ALL_RUNS_SUBJECT], storage: StorageType.File, duplicate_window: duplicateWindowMs * 1_000_000, allow_direct: true, num_replicas: replicas };
}

/**
 * Creates the stream if missing; a stream made before direct get was part of the definition gets it added.
 * `replicas`: only the dispatcher passes it (TCAB_NATS_STREAM_REPLICAS): the stream is made with that many, and an
 * existing one (made by a driver or reader first, or before the install had a NATS cluster) is scaled to it. Others
 * leave an existing stream's replicas alone.
 */
export async function ensureRunStream(jsm: JetStreamManager, duplicateWindowMs = DUPLICATE_WINDOW_MS, replicas?: number): Promise<void> {
  try {
    const { config } = await jsm.streams.info(STREAM_NAME);
    // Not fatal when refused (a client without stream-edit permission): a driver's pod-start lookup then fails and
    // its hold ends at its bound, as with no dispatcher; publishing is unaffected.
    if (!config.allow_direct) await jsm.streams.update(STREAM_NAME, { ...config, allow_direct: true }).catch(() => undefined);
    // The dispatcher's scale-up is not optional: a stream on fewer servers than asked would be lost with one of them.
    if (replicas !== undefined && config.num_replicas !== replicas) await jsm.streams.update(STREAM_NAME, { ...config, allow_direct: true, num_replicas: replicas });
    return;
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
  }
  try {
    await jsm.streams.add(runStreamConfig(duplicateWindowMs, replicas));
  } catch (error) {
    // Another process created it in between (perhaps with another duplicate window): it exists, which is the point.
    const made = await jsm.streams.info(STREAM_NAME).catch(() => {
      throw error;
    });
    if (replicas !== undefined && made.config.num_replicas !== replicas) await jsm.streams.update(STREAM_NAME, { ...made.config, num_replicas: replicas });
  }
}
