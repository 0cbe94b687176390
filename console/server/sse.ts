// Server-Sent Events on a raw Node response: headers, one `event:`/`id:`/`data:` frame per message, a comment
// every 15 s so proxies keep an idle stream open (and the reader's credential is asked again: a rotated token or an
// expired session ends the stream), and where a reconnecting browser resumes (resumeAfter).
import type { ServerResponse } from 'node:http';

export const HEARTBEAT_MS = 15_000;
/** How long a browser waits before reconnecting (the `retry:` field). */
export const RETRY_MS = 1_000;

/** One SSE frame. `data` is JSON on one line (JSON.stringify never emits a raw newline). */
export function frame(event: string, data: unknown, id?: number): string {
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/**
 * The stream sequence to resume after: the Last-Event-ID header (sent by the browser's own reconnect, so newer
 * than the URL's ?after, which it repeats unchanged) else ?after, else 0 (from the first). Anything that is not a
 * non-negative safe integer counts as absent: it cannot name a message.
 */
export function resumeAfter(query: unknown, lastEventId: string | string[] | undefined): number {
  const parse = (v: unknown): number | undefined => {
    if (typeof v !== 'string' || !/^\d{1,16}$/.test(v)) return undefined;
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : undefined;
  };
  const header = parse(Array.isArray(lastEventId) ? lastEventId[0] : lastEventId);
  if (header !== undefined) return header;
  return parse((query as { after?: unknown } | undefined)?.after) ?? 0;
}

export interface SseOptions {
  heartbeatMs?: number;
  /** Asked at every heartbeat: false ends the stream (the browser's reconnect then meets the 401). */
  stillAllowed?: () => boolean;
}

export class SseStream {
  private readonly heartbeat: NodeJS.Timeout;
  private closedFlag = false;
  readonly closed: Promise<void>;

  private readonly res: ServerResponse;

  constructor(res: ServerResponse, options: SseOptions = {}) {
    this.res = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx (ingress-nginx) buffers responses unless told not to: a live feed must not wait for a buffer to fill.
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${RETRY_MS}\n\n`);
    this.heartbeat = setInterval(() => {
      if (options.stillAllowed && !options.stillAllowed()) this.end();
      else this.res.write(': keep-alive\n\n');
    }, options.heartbeatMs ?? HEARTBEAT_MS);
    this.closed = new Promise((resolve) => {
      res.on('close', () => {
        this.closedFlag = true;
        clearInterval(this.heartbeat);
        resolve();
      });
    });
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  send(event: string, data: unknown, id?: number): void {
    if (!this.closedFlag) this.res.write(frame(event, data, id));
  }

  /** How long the browser waits before it reconnects, from now on (the `retry:` field). */
  retry(ms: number): void {
    if (!this.closedFlag) this.res.write(`retry: ${ms}\n\n`);
  }

  end(): void {
    clearInterval(this.heartbeat);
    if (!this.closedFlag) this.res.end();
  }
}
