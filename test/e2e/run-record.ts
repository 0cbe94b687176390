// What a Run's record is, read back from outside the cluster, to prove an attempt on it changed nothing: its whole
// stream (as many messages as JetStream holds on its subjects, read with the reader credential), what its driver
// itself wrote (the container log: events on stdout, the result on stderr), and the dispatcher replicas'
// tcab_results_rejected_total.
import { jetstreamManager } from '@nats-io/jetstream';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { runSubjects } from '../../nats/envelope.ts';
import { READER_INBOX_PREFIX } from '../../nats/auth/permissions.ts';
import { connectNats } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { STREAM_NAME } from '../../nats/stream.ts';
import { inContainer } from './in-cluster.ts';

/** How many messages the run stream holds on a run's subjects (the reader may ask for the stream's info). */
export async function storedCount(reader: NatsSettings, runId: string): Promise<number> {
  const nc = await connectNats({ ...reader, inboxPrefix: READER_INBOX_PREFIX }, { name: 'e2e-run-record' });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(STREAM_NAME, { subjects_filter: runSubjects(runId) });
    return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  } finally {
    await nc.close();
  }
}

/** One stream's lines of a CRI container log (`<time> stdout|stderr F|P <text>`), partial lines joined. */
function criLines(log: string, stream: 'stdout' | 'stderr'): string[] {
  const lines: string[] = [];
  let partial = '';
  for (const line of log.split('\n')) {
    const m = /^\S+ (stdout|stderr) ([FP]) (.*)$/.exec(line);
    if (!m || m[1] !== stream) continue;
    partial += m[3];
    if (m[2] === 'F') {
      lines.push(partial);
      partial = '';
    }
  }
  return lines;
}

/** What a driver wrote: its events (NDJSON on stdout, what it published) and its result (a JSON line on stderr). */
export function driverRecord(log: string): { events: HarnessEvent[]; result: RunResult | undefined } {
  const json = (line: string) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const events = criLines(log, 'stdout').map(json).filter((e) => e !== undefined) as unknown as HarnessEvent[];
  const result = criLines(log, 'stderr').map(json).find((r) => typeof r?.run_id === 'string' && typeof r.outcome === 'string') as RunResult | undefined;
  return { events, result };
}

/**
 * The events the dispatcher, not the driver, puts on a run's stream: the kubelet's pull/start Events it relays
 * and the Pod's deletion (status/lifecycle-events.ts).
 */
export const fromDispatcher = (e: HarnessEvent): boolean =>
  e.type === 'system' && (e.stage === 'pull_image' || e.stage === 'start_container' || (e.stage === 'teardown' && /driver pod \S+ deleted|^deleting driver pod/.test(e.message)));

/** tcab_results_rejected_total of each dispatcher Pod, by reason (its /metrics, read inside its container). */
export async function rejectedResults(namespace: string, pods: string[], port: number): Promise<Record<string, Record<string, number>>> {
  const counts: Record<string, Record<string, number>> = {};
  for (const pod of pods) {
    const out = await inContainer(namespace, pod, 'dispatcher', `node -e "fetch('http://127.0.0.1:${port}/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))"`);
    if (out.code !== 0) throw new Error(`metrics of ${pod}: ${out.stderr}`);
    counts[pod] = Object.fromEntries([...out.stdout.matchAll(/^tcab_results_rejected_total\{reason="([a-z]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  }
  return counts;
}
