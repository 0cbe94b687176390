// gg records that yield no event of their own (shared/translate/folds.ts; checked by the property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: {}, when: (record) => 'gg_result' in record, kind: 'restated', why: "gg's closing summary (usage, stop reason, final text): a second one replaces the first" },
];
