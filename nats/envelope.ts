// What a message of a run's stream looks like on the wire, as pure functions: the one place that knows subject
// names, the Nats-Msg-Id, our headers and the CloudEvents (binary mode) headers. Driver and dispatcher publish
// through these; readers and the result consumer parse through these.
//
// Subjects let a consumer take one run (`tcab.run.<run>.>`), all runs (`tcab.run.>`), one event type across runs
// (`tcab.run.*.event.<type>`) or every result (`tcab.run.*.result`).
import type { HarnessEvent, HarnessEventType } from '../shared/events.ts';
import { HARNESS_EVENT_TYPES } from '../shared/events.ts';
import type { RunResult } from '../shared/run.ts';
import { RUN_ID_PATTERN, isRunId, parseRunId } from '../shared/run-id.ts';

export const ALL_RUNS_SUBJECT = 'tcab.run.>';
export const ALL_RESULTS_SUBJECT = 'tcab.run.*.result';

/**
 * A run id as a single subject token. The run id grammar (shared/run-id.ts) already excludes what a token cannot
 * hold ('.', '*', '>', whitespace), so the id is used unchanged; anything else is refused, never rewritten:
 * rewriting would let two ids share a subject (`x.y` and `x y` both became `x_y`).
 */
export function runToken(runId: string): string {
  return parseRunId(runId, 'run id');
}

export const eventSubject = (runId: string, type: HarnessEventType) => `tcab.run.${runToken(runId)}.event.${type}`;
export const resultSubject = (runId: string) => `tcab.run.${runToken(runId)}.result`;
export const runSubjects = (runId: string) => `tcab.run.${runToken(runId)}.>`;
export const eventTypeSubject = (type: HarnessEventType) => `tcab.run.*.event.${type}`;

/**
 * A run's progress (shared/run-progress.ts): a core NATS subject outside the run stream's `tcab.run.>`, so it is
 * never stored and no reader of events meets it. The dispatcher (leader) subscribes to ALL_PROGRESS_SUBJECT.
 */
export const progressSubject = (runId: string) => `tcab.progress.${runToken(runId)}`;
export const ALL_PROGRESS_SUBJECT = 'tcab.progress.*';

/** The run id of a progress subject; undefined for anything progressSubject cannot make. */
export function runIdOfProgressSubject(subject: string): string | undefined {
  const prefix = 'tcab.progress.';
  if (!subject.startsWith(prefix)) return undefined;
  const runId = subject.slice(prefix.length);
  return isRunId(runId) ? runId : undefined;
}

export type ParsedSubject = { runId: string; kind: 'event'; type: HarnessEventType } | { runId: string; kind: 'result' };

// Built from the run id grammar, so a subject parses exactly when the builders above could have made it.
const SUBJECT = new RegExp(`^tcab\\.run\\.(${RUN_ID_PATTERN.source.replace(/^\^|\$$/g, '')})\\.(?:event\\.(${HARNESS_EVENT_TYPES.join('|')})|(result))$`);

/** A run stream subject back to its run id and kind; undefined for anything the builders cannot make. */
export function parseSubject(subject: string): ParsedSubject | undefined {
  const m = SUBJECT.exec(subject);
  if (!m) return undefined;
  return m[3] ? { runId: m[1]!, kind: 'result' } : { runId: m[1]!, kind: 'event', type: m[2] as HarnessEventType };
}

/** Message headers every published message carries (CloudEvents binary mode plus our own). */
export const HEADER = {
  runId: 'Tcab-Run-Id',
  seq: 'Tcab-Seq',
  kind: 'Tcab-Kind',
  /** Which attempt of a cluster Run published the message (1, 2, ...): its Tcab-Seq counts from 1 again. */
  attempt: 'Tcab-Attempt',
  msgId: 'Nats-Msg-Id',
} as const;

/**
 * The Nats-Msg-Id of a driver message: run id, attempt (a cluster Run's uid: a Run deleted and re-created under its
 * name within the duplicate window is not taken for retries of the earlier one) and sequence (`result` for the result).
 */
export function driverMsgId(runId: string, attempt: string | undefined, seq: number | 'result'): string {
  return `${attempt ? `${runId}:${attempt}` : runId}:${seq}`;
}

/**
 * The attempt a result's Nats-Msg-Id names (driverMsgId backwards): undefined when it names none (a workstation
 * run), is not a result id of this run, or holds something no attempt can be (too long, a newline, a ':').
 */
export function attemptOfResultMsgId(runId: string, msgId: string | undefined): string | undefined {
  const suffix = ':result';
  if (!msgId?.startsWith(`${runId}:`) || !msgId.endsWith(suffix)) return undefined;
  const attempt = msgId.slice(runId.length + 1, -suffix.length);
  // An attempt follows the run id grammar (parseRunAttempt); anything else in a header is no attempt of ours.
  return isRunId(attempt) ? attempt : undefined;
}

/**
 * The Nats-Msg-Id of a cluster event the dispatcher relays: no driver sequence; the kubelet's time tells repeats
 * apart, and the attempt (when known) the same event of two attempts in one second.
 */
export function clusterMsgId(runId: string, event: HarnessEvent, attemptNumber?: number): string {
  return `${runId}:k8s:${attemptNumber !== undefined ? `a${attemptNumber}:` : ''}${event.type === 'system' ? `${event.stage}:${event.status}` : event.type}:${event.timestamp}`;
}

/** One message as it is published: subject, dedup id and headers; the payload travels beside it. */
export interface Envelope {
  subject: string;
  msgId: string;
  headers: Record<string, string>;
}

interface EnvelopeFields {
  subject: string;
  msgId: string;
  runId: string;
  /** The driver's 1-based sequence; 0 for what the cluster reports (not part of the driver's numbering). */
  seq: number;
  kind: 'event' | 'result';
  source: 'driver' | 'dispatcher';
  ceType: string;
  time: string;
  attemptNumber?: number;
}

function envelope(f: EnvelopeFields): Envelope {
  return {
    subject: f.subject,
    msgId: f.msgId,
    headers: {
      [HEADER.runId]: f.runId,
      [HEADER.seq]: String(f.seq),
      [HEADER.kind]: f.kind,
      ...(f.attemptNumber !== undefined ? { [HEADER.attempt]: String(f.attemptNumber) } : {}),
      'ce-specversion': '1.0',
      'ce-id': f.msgId,
      'ce-source': `urn:tcab:${f.source}`,
      'ce-type': f.ceType,
      'ce-subject': f.runId,
      'ce-time': f.time,
      'content-type': 'application/json',
    },
  };
}

/** A driver's event (already sequenced and scrubbed). */
export function eventEnvelope(runId: string, attempt: string | undefined, seq: number, event: HarnessEvent, attemptNumber?: number): Envelope {
  const msgId = driverMsgId(runId, attempt, seq);
  return envelope({ subject: eventSubject(runId, event.type), msgId, runId, seq, kind: 'event', source: 'driver', ceType: `dev.tcab.harness.event.${event.type}`, time: event.timestamp, attemptNumber });
}

/** A driver's run result: sequenced after the run's last event. */
export function resultEnvelope(result: RunResult, attempt: string | undefined, attemptNumber?: number): Envelope {
  const msgId = driverMsgId(result.run_id, attempt, 'result');
  return envelope({ subject: resultSubject(result.run_id), msgId, runId: result.run_id, seq: result.event_count + 1, kind: 'result', source: 'driver', ceType: 'dev.tcab.run.result', time: result.finished_at, attemptNumber });
}

/**
 * A cluster event (pull_image, start_container, the Pod's teardown) the dispatcher relays into the run's subjects,
 * with the attempt whose Pod it is about (the Tcab-Attempt header readers sort attempts by) when known.
 */
export function clusterEventEnvelope(runId: string, event: HarnessEvent, attemptNumber?: number): Envelope {
  const msgId = clusterMsgId(runId, event, attemptNumber);
  return envelope({ subject: eventSubject(runId, event.type), msgId, runId, seq: 0, kind: 'event', source: 'dispatcher', ceType: `dev.tcab.harness.event.${event.type}`, time: event.timestamp, attemptNumber });
}
