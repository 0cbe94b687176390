// One JetStream message of a run's stream -> what `tcab events follow|tail` print. Pure: each message is judged
// alone, and whatever it holds (invalid UTF-8, not JSON, nesting deep enough to overflow any recursive walk,
// megabytes, a record that breaks the contract) it becomes one bounded `invalid` item, never an exception that
// ends the reading of every message after it.
import { HarnessEvent } from '../shared/events.ts';
import type { EventOf } from '../shared/events.ts';
import { RunResult } from '../shared/run.ts';
import { formatIssues } from '../shared/zod-issues.ts';
import { HEADER, attemptOfResultMsgId } from './envelope.ts';
import { MAX_MESSAGE_DEPTH, jsonTextNestsDeeperThan } from '../shared/json-depth.ts';

/** Deeper JSON is refused before JSON.parse, zod or JSON.stringify see it (shared/json-depth.ts). */
export const MAX_JSON_DEPTH = MAX_MESSAGE_DEPTH;
/** A hostile message is shown, not replayed: this much of its subject, payload and reason at most. */
export const MAX_SUBJECT_CHARS = 256;
export const MAX_RAW_CHARS = 4096;
export const MAX_REASON_CHARS = 512;

export type StreamItem =
  /** seq: the Tcab-Seq header; 0 when absent or not a count, like the dispatcher's own lifecycle events. */
  /** attempt: the Tcab-Attempt header (a cluster Run's attempt, from 1) when the message carries a valid one. */
  | { kind: 'event'; runId: string; seq: number; event: HarnessEvent; attempt?: number }
  /** attempt: the run attempt the result's Nats-Msg-Id names (a cluster Run's uid), when it names one. */
  | { kind: 'result'; runId: string; result: RunResult; attempt?: string }
  | {
      kind: 'invalid';
      subject: string;
      runId: string;
      seq: number;
      /** The message claimed to be a run's result (its kind header or its subject). */
      isResult: boolean;
      /** What is wrong with it, bounded: the first failing fields, or why it could not be read at all. */
      reason: string;
      /** The message as an `unknown` event (bounded raw payload), so it is printed in order and nothing is lost. */
      event: EventOf<'unknown'>;
    };

export interface StreamMessage {
  subject: string;
  /** A header's value; may throw (headers are decoded lazily from bytes the publisher chose). */
  header(name: string): string | undefined;
  data: Uint8Array;
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function safeHeader(message: StreamMessage, name: string): string | undefined {
  try {
    return message.header(name);
  } catch {
    return undefined;
  }
}

/** A Tcab-Attempt header: a whole number from 1 (at most 3 digits), else none. */
function attemptOf(value: string | undefined): number | undefined {
  return value !== undefined && /^[1-9]\d{0,2}$/.test(value) ? Number(value) : undefined;
}

function seqOf(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

type Reading = { ok: true; value: unknown; text: string } | { ok: false; reason: string; text: string };

/** Bytes -> JSON value, refusing what cannot be read safely; `text` is what to show of it either way. */
function readJson(data: Uint8Array): Reading {
  let text: string;
  try {
    text = strictUtf8.decode(data);
  } catch {
    return { ok: false, reason: 'the payload is not valid UTF-8', text: lossyUtf8.decode(data.subarray(0, MAX_RAW_CHARS * 4)) };
  }
  if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH)) return { ok: false, reason: `the payload nests deeper than ${MAX_JSON_DEPTH} levels`, text };
  try {
    return { ok: true, value: JSON.parse(text) as unknown, text };
  } catch (error) {
    return { ok: false, reason: `the payload is not JSON (${(error as Error).message})`, text };
  }
}

function asUnknownEvent(reading: Reading, bytes: number, now: Date): EventOf<'unknown'> {
  const timestamp = now.toISOString();
  if (reading.ok && reading.text.length <= MAX_RAW_CHARS) return { type: 'unknown', timestamp, raw: reading.value as EventOf<'unknown'>['raw'] };
  if (reading.text.length <= MAX_RAW_CHARS) return { type: 'unknown', timestamp, raw: reading.text };
  return { type: 'unknown', timestamp, raw: `${reading.text.slice(0, MAX_RAW_CHARS)}…[tcab: message cut, original ${bytes} bytes]`, original_bytes: bytes };
}

/** Decodes one message of a run stream. Never throws. */
export function decodeStreamMessage(message: StreamMessage, now: () => Date): StreamItem {
  const subject = clip(message.subject, MAX_SUBJECT_CHARS);
  const runId = clip(safeHeader(message, HEADER.runId) ?? '', MAX_SUBJECT_CHARS);
  const seq = seqOf(safeHeader(message, HEADER.seq));
  const isResult = safeHeader(message, HEADER.kind) === 'result' || message.subject.endsWith('.result');
  const reading = readJson(message.data);
  const invalid = (reason: string): StreamItem => ({
    kind: 'invalid',
    subject,
    runId,
    seq,
    isResult,
    reason: clip(reason, MAX_REASON_CHARS),
    event: asUnknownEvent(reading, message.data.length, now()),
  });
  if (!reading.ok) return invalid(reading.reason);
  try {
    if (isResult) {
      const parsed = RunResult.safeParse(reading.value);
      if (!parsed.success) return invalid(formatIssues(parsed.error));
      const attempt = attemptOfResultMsgId(parsed.data.run_id, safeHeader(message, HEADER.msgId));
      return { kind: 'result', runId, result: parsed.data, ...(attempt ? { attempt } : {}) };
    }
    const parsed = HarnessEvent.safeParse(reading.value);
    const attemptNumber = attemptOf(safeHeader(message, HEADER.attempt));
    return parsed.success ? { kind: 'event', runId, seq, event: parsed.data, ...(attemptNumber ? { attempt: attemptNumber } : {}) } : invalid(formatIssues(parsed.error));
  } catch (error) {
    // Depth is bounded above, so this is a record too large to check (memory): still one message, not the stream.
    return invalid(`the payload could not be checked (${(error as Error).message})`);
  }
}
