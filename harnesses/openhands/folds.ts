// OpenHands records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). The CLI's text lines need none: each run of them is one `unknown`
// (cli-text.ts), so removing any line changes that event.
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { kind: 'MessageEvent', source: 'user', llm_message: { role: 'user' } }, kind: 'silent', why: 'the prompt as OpenHands received it' },
  {
    match: { kind: 'ObservationEvent', observation: { kind: ['FinishObservation', 'ThinkObservation'] } },
    kind: 'restated',
    why: "finish's message and think's thought again, reported from the call",
  },
];
