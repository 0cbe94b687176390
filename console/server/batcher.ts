// Coalesces row changes so a burst (a relist, 1,000 Runs changing phase) goes out as one message per interval:
// the last change of each key wins, an upsert after a remove is an upsert, a remove after an upsert a remove.
export class KeyedBatcher<V> {
  private upserts = new Map<string, V>();
  private removes = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  private readonly intervalMs: number;
  private readonly flush: (upserts: V[], removes: string[]) => void;

  constructor(intervalMs: number, flush: (upserts: V[], removes: string[]) => void) {
    this.intervalMs = intervalMs;
    this.flush = flush;
  }

  upsert(key: string, value: V): void {
    this.removes.delete(key);
    this.upserts.set(key, value);
    this.schedule();
  }

  remove(key: string): void {
    this.upserts.delete(key);
    this.removes.add(key);
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => this.flushNow(), this.intervalMs);
  }

  flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.upserts.size === 0 && this.removes.size === 0) return;
    const upserts = [...this.upserts.values()];
    const removes = [...this.removes];
    this.upserts = new Map();
    this.removes = new Set();
    this.flush(upserts, removes);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
