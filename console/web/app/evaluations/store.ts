// The Evaluations pages' state: every EvaluationRow by key (one stream for the list and for each evaluation's page:
// Evaluations are few), replaced on each message so the pages re-render.
import { signal } from '@preact/signals';
import type { z } from 'zod';
import type { EVALUATIONS_MESSAGES, EvaluationRow } from '../../../../shared/console.ts';
import { syncServerTime } from '../clock.ts';

type Data<K extends keyof typeof EVALUATIONS_MESSAGES> = z.infer<(typeof EVALUATIONS_MESSAGES)[K]>;

export class EvaluationsStore {
  readonly rows = signal(new Map<string, EvaluationRow>());
  readonly ready = signal(false);
  /** false: the console reads no Evaluations. */
  readonly available = signal(true);

  readonly handlers = {
    snapshot: (data: Data<'snapshot'>) => {
      syncServerTime(data.serverTime);
      this.available.value = data.available;
      this.rows.value = new Map(data.rows.map((r) => [r.key, r]));
      this.ready.value = true;
    },
    upsert: (data: Data<'upsert'>) => {
      const next = new Map(this.rows.value);
      for (const r of data.rows) next.set(r.key, r);
      this.rows.value = next;
    },
    remove: (data: Data<'remove'>) => {
      const next = new Map(this.rows.value);
      for (const key of data.keys) next.delete(key);
      this.rows.value = next;
    },
  };
}
