// The one JetStream stream every run is published to, and the one way to make sure it exists: the driver, the
// dispatcher and readers (`tcab events follow` started before any run) all call this, so whichever comes first
// creates it, with the same definition.
import { JetStreamApiCodes, JetStreamApiError, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { ALL_RUNS_SUBJECT, STREAM_NAME } from './subjects.ts';

/** Retried publishes carry `Nats-Msg-Id`; within this window the server drops the repeat. */
export const DUPLICATE_WINDOW_MS = 15 * 60_000;

export async function ensureRunStream(jsm: JetStreamManager, duplicateWindowMs = DUPLICATE_WINDOW_MS): Promise<void> {
  try {
    await jsm.streams.info(STREAM_NAME);
    return;
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
  }
  try {
    await jsm.streams.add({ name: STREAM_NAME, subjects: [ALL_RUNS_SUBJECT], storage: StorageType.File, duplicate_window: duplicateWindowMs * 1_000_000 });
  } catch (error) {
    // Another process created it in between (perhaps with another duplicate window): it exists, which is the point.
    await jsm.streams.info(STREAM_NAME).catch(() => {
      throw error;
    });
  }
}
