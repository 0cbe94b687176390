// The runs page's state: every RunRow by key in a Map mutated in place (10k rows, batches every ~200 ms), with a
// version signal that tells the derived views to recompute.
import { signal } from '@preact/signals';
import type { RunRow, RUNS_MESSAGES } from '../../../../shared/console.ts';
import type { z } from 'zod';
import { syncServerTime } from '../clock.ts';

type Data<K extends keyof typeof RUNS_MESSAGES> = z.infer<(typeof RUNS_MESSAGES)[K]>;

export class RunsStore {
  readonly rows = new Map<string, RunRow>();
  readonly version = signal(0);
  readonly ready = signal(false);
  readonly stalledAfterSeconds = signal(300);
  readonly notice = signal<string | undefined>(undefined);

  readonly handlers = {
    snapshot: (data: Data<'snapshot'>) => {
      syncServerTime(data.serverTime);
      this.stalledAfterSeconds.value = data.stalledAfterSeconds;
      this.rows.clear();
      for (const row of data.rows) this.rows.set(row.key, row);
      this.bump();
      this.ready.value = true;
    },
    upsert: (data: Data<'upsert'>) => {
      for (const row of data.rows) this.rows.set(row.key, row);
      this.bump();
    },
    remove: (data: Data<'remove'>) => {
      for (const key of data.keys) this.rows.delete(key);
      this.bump();
    },
    notice: (data: Data<'notice'>) => {
      this.notice.value = data.text || undefined;
    },
  };

  private bump(): void {
    this.version.value++;
  }
}
