// One run's state: the Run (row, spec, status), its feed (each event once, in stream order), its result, its
// Kubernetes Events, and whether the replay reached the live tail.
import { batch, signal } from '@preact/signals';
import type { z } from 'zod';
import type { FeedItem, KubeEventRow, RUN_MESSAGES } from '../../../../shared/console.ts';
import type { RunResult } from '../../../../shared/run.ts';
import { FeedBuffer } from '../../feed.ts';
import { syncServerTime } from '../clock.ts';

type Data<K extends keyof typeof RUN_MESSAGES> = z.infer<(typeof RUN_MESSAGES)[K]>;
export type RunInfo = Data<'run'>;

export class RunStore {
  readonly feed = new FeedBuffer();
  /** Bumped when the feed grows: the feed view and the timeline recompute. */
  readonly feedVersion = signal(0);
  readonly run = signal<RunInfo | null>(null);
  readonly result = signal<RunResult | null>(null);
  readonly kubeEvents = signal<KubeEventRow[]>([]);
  readonly caughtUp = signal(false);
  readonly gone = signal(false);
  readonly notice = signal<string | undefined>(undefined);

  readonly handlers = {
    run: (data: Data<'run'>) => {
      syncServerTime(data.serverTime);
      batch(() => {
        this.run.value = data;
        this.gone.value = false;
      });
    },
    event: (data: FeedItem) => this.append([data]),
    events: (data: Data<'events'>) => this.append(data.items),
    result: (data: Data<'result'>) => (this.result.value = data.result),
    'kube-events': (data: Data<'kube-events'>) => (this.kubeEvents.value = data.items),
    'caught-up': () => (this.caughtUp.value = true),
    gone: () => (this.gone.value = true),
    notice: (data: Data<'notice'>) => (this.notice.value = data.text || undefined),
  };

  private append(items: readonly FeedItem[]): void {
    if (this.feed.add(items) > 0) batch(() => this.feedVersion.value++);
  }
}
