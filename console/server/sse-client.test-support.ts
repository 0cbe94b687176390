// A minimal Server-Sent Events client for the console's tests (fetch + a frame parser), with waitFor on a
// condition of the frames received so far (no sleeps).
import { FeedItem } from '../../shared/console.ts';

export interface Frame {
  event: string;
  id?: number;
  data: unknown;
}

export class SseClient {
  readonly frames: Frame[] = [];
  private readonly abort = new AbortController();
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private ended: Error | undefined;

  private static readonly openClients = new Set<SseClient>();

  /** Closes every client still open (an afterAll/afterEach step, so a failed test leaves no stream behind). */
  static closeAll(): void {
    for (const client of SseClient.openClients) client.close();
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    SseClient.openClients.add(client);
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: client.abort.signal });
    if (response.status !== 200 || !response.body) throw new Error(`${url}: HTTP ${response.status}`);
    void client.read(response.body);
    return client;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
          }
          if (!fields.has('data')) continue;
          this.frames.push({ event: fields.get('event') ?? 'message', id: fields.has('id') ? Number(fields.get('id')) : undefined, data: JSON.parse(fields.get('data')!) });
          this.settle();
        }
      }
    } catch (error) {
      this.ended = error as Error;
    }
    this.ended ??= new Error('stream ended');
    this.settle();
  }

  private settle(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves when a frame (or the frames so far) satisfy the condition; rejects if the stream ends first. */
  waitFor(condition: (frame: Frame) => boolean): Promise<void> {
    const check = () => this.frames.some(condition) || condition({ event: '', data: undefined });
    if (check()) return Promise.resolve();
    if (this.ended && !this.abort.signal.aborted) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      this.waiters.push({ check: () => {
        if (check()) return true;
        if (this.ended && !this.abort.signal.aborted) reject(this.ended);
        return false;
      }, resolve });
    });
  }

  data(event: string): unknown[] {
    return this.frames.filter((f) => f.event === event).map((f) => f.data);
  }

  feedItems(): FeedItem[] {
    return this.frames.flatMap((f) => (f.event === 'event' ? [FeedItem.parse(f.data)] : f.event === 'events' ? (f.data as { items: unknown[] }).items.map((i) => FeedItem.parse(i)) : []));
  }

  lastId(): number | undefined {
    return this.frames.findLast((f) => f.id !== undefined)?.id;
  }

  close(): void {
    SseClient.openClients.delete(this);
    this.abort.abort();
  }
}
