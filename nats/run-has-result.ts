// Whether a run's result is on the stream, without waiting for it: one direct get of the last message on the run's
// result subject (a reader credential may: nats/auth/permissions.ts). `tcab export` uses it to refuse a run that
// has not ended (or an id never used) at once, where reading the stream until the result would wait forever.
import { jetstreamManager } from '@nats-io/jetstream';
import { InfrastructureError } from '../shared/exit-codes.ts';
import { resultSubject } from './envelope.ts';
import { STREAM_NAME } from './stream.ts';
import { reasonOf, shownServers } from './server-urls.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';
import { READER_INBOX_PREFIX } from './auth/permissions.ts';

export async function runHasResult(settings: NatsSettings, runId: string): Promise<boolean> {
  const where = `NATS at ${shownServers(settings.servers)}`;
  const nc = await connectNats({ ...settings, inboxPrefix: settings.inboxPrefix ?? READER_INBOX_PREFIX }, { name: 'tcab-export' }).catch((error: unknown) => {
    throw new InfrastructureError(`cannot connect to ${where}: ${reasonOf(error)}`, { cause: error });
  });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.direct.getMessage(STREAM_NAME, { last_by_subj: resultSubject(runId) })) !== null;
  } catch (error) {
    throw new InfrastructureError(`cannot read the run stream ${STREAM_NAME} from ${where}: ${reasonOf(error)}`, { cause: error });
  } finally {
    await nc.close();
  }
}
