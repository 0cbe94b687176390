// NATS subject names: the one place that knows them. Layout lets a consumer take one run
// (`tcab.run.<run>.>`), all runs (`tcab.run.>`), or one event type across runs (`tcab.run.*.event.<type>`).
import type { HarnessEventType } from './events.ts';
import { parseRunId } from './run-id.ts';

export const STREAM_NAME = 'TCAB_RUNS';
export const ALL_RUNS_SUBJECT = 'tcab.run.>';

/**
 * A run id as a single subject token. The run id grammar (run-id.ts) already excludes what a token cannot hold
 * ('.', '*', '>', whitespace), so the id is used unchanged; anything else is refused, never rewritten: rewriting
 * would let two ids share a subject (`x.y` and `x y` both became `x_y`).
 */
export function runToken(runId: string): string {
  return parseRunId(runId, 'run id');
}

export const eventSubject = (runId: string, type: HarnessEventType) => `tcab.run.${runToken(runId)}.event.${type}`;
export const resultSubject = (runId: string) => `tcab.run.${runToken(runId)}.result`;
export const runSubjects = (runId: string) => `tcab.run.${runToken(runId)}.>`;
export const eventTypeSubject = (type: HarnessEventType) => `tcab.run.*.event.${type}`;

/** Message headers every published message carries (CloudEvents binary mode plus our own). */
export const HEADER = {
  runId: 'Tcab-Run-Id',
  seq: 'Tcab-Seq',
  kind: 'Tcab-Kind',
  msgId: 'Nats-Msg-Id',
} as const;
