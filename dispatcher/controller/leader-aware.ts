// Leadership as a wrapper around the leader-only loops (kueue's leader_aware_reconciler.go): every replica keeps
// its caches warm and its queues fed; only the Lease holder acts. A follower's reconcile does housekeeping only
// (dropping the memory of Runs that are over), and the moment a replica starts leading, every key is enqueued, so
// nothing that happened while it followed is missed (level-based: the caches say what is, not what changed).
import type { ReconcileResult } from './work-queue.ts';

export type Reconcile = (key: string) => Promise<ReconcileResult>;

export class Leadership {
  private leading = false;
  private readonly onStartedLeading: () => void;

  constructor(onStartedLeading: () => void) {
    this.onStartedLeading = onStartedLeading;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  set(leading: boolean): void {
    const started = leading && !this.leading;
    this.leading = leading;
    if (started) this.onStartedLeading();
  }

  /** `lead` while leading, else `follow` (default: nothing); checked per key, as the key is taken. */
  wrap(lead: Reconcile, follow: (key: string) => ReconcileResult = () => undefined): Reconcile {
    return async (key) => (this.leading ? lead(key) : follow(key));
  }
}
