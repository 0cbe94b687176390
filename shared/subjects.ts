// NATS subject names: the one place that knows them. Layout lets a consumer take one run
// (`tcab.run.<run>.>`), all runs (`tcab.run.>`), or one event type across runs (`tcab.run.*.event.<type>`).
import type { HarnessEventType } from './events.ts';

export const STREAM_NAME = 'TCAB_RUNS';
export const ALL_RUNS_SUBJECT = 'tcab.run.>';

/** A run id as a single subject token: NATS tokens cannot hold '.', '*', '>' or whitespace. */
export function runToken(runId: string): string {
  const token = runId.replace(/[^A-Za-z0-9_-]/g, '_');
  if (token.length === 0) throw new Error('run id must not be empty');
  return token;
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
