// The spec's best-effort strategy: a harness whose stream is not modelled yet has every stdout line surfaced as
// `unknown`, carrying the parsed JSON value where the line is JSON and the text otherwise. A harness can be
// promoted to a structured mapping later without changing the event contract.
import type { DraftEvent, EventOf } from '../events.ts';
import type { SessionResult, SessionTranslator, StdoutLine } from '../adapter.ts';

export function unknownLine(line: StdoutLine): DraftEvent {
  return unknownValue(line.json ?? line.text);
}

/** An `unknown` event for a value taken from parsed harness JSON (hence a JSON value). */
export function unknownValue(value: unknown): DraftEvent {
  return { type: 'unknown', raw: value as EventOf<'unknown'>['raw'] };
}

export interface BestEffortHooks {
  /** Reads a final JSON summary some best-effort CLIs print (usage, cost, session id), without classifying lines. */
  observe?(line: StdoutLine, result: SessionResult): void;
}

export function bestEffortTranslator(hooks: BestEffortHooks = {}): SessionTranslator {
  const result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };
  return {
    line(line) {
      hooks.observe?.(line, result);
      return [unknownLine(line)];
    },
    sessionId: () => result.session_id,
    finish: () => ({ events: [], result }),
  };
}
