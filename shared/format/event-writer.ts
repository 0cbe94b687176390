// Where a stream of events goes on a terminal-facing command: NDJSON lines or the human view.
import type { Writable } from 'node:stream';
import type { HarnessEvent } from '../events.ts';
import { formatEvent } from './human.ts';
import { formatSummary } from './summary.ts';
import type { SummaryInput } from './summary.ts';

export type EventFormat = 'json' | 'pretty';

export function resolveFormat(flags: { json?: boolean; pretty?: boolean }, isTty: boolean): EventFormat {
  if (flags.json) return 'json';
  if (flags.pretty) return 'pretty';
  return isTty ? 'pretty' : 'json';
}

export interface EventWriter {
  event(event: HarnessEvent): void;
  summary(result: SummaryInput): void;
  /** Any other line, kept in order with the events. */
  line(text: string): void;
  close(): Promise<void>;
  /**
   * Resolves once what was written has been taken by the reader of `out`, at once when it keeps up. Producers
   * that can wait (`events follow|tail`, `translate`) await it per batch, so a slow consumer slows them instead of
   * piling output up in memory; `tcab run` cannot pause its harness and does not wait (its output buffers).
   */
  drained(): Promise<void>;
}

/** Waits while the reader of `out` is behind (write() said so), until it drains, closes or fails. */
export function outputDrained(out: Writable): Promise<void> {
  if (!out.writableNeedDrain || out.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
  });
}

export function createEventWriter(out: Writable & { isTTY?: boolean }, format: EventFormat, options: { fullReasoning?: boolean } = {}): EventWriter {
  const color = format === 'pretty' && out.isTTY === true && !process.env.NO_COLOR;
  // Events are written live, but not one syscall each: what is written in one turn of the event loop (a chunk of
  // harness output translated, a batch of NATS messages) goes out as one write at the end of that turn, or sooner
  // once 64 KiB are pending. A consumer on a pipe sees each event as soon as the turn that made it ends.
  let pending: string[] = [];
  let pendingBytes = 0;
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (pending.length === 0) return;
    out.write(pending.join(''));
    pending = [];
    pendingBytes = 0;
  };
  const write = (text: string) => {
    pending.push(text);
    pendingBytes += text.length;
    if (pendingBytes > 64 * 1024) flush();
    else scheduled ??= setImmediate(flush);
  };
  return {
    event(event) {
      write(format === 'json' ? `${JSON.stringify(event)}\n` : `${formatEvent(event, { color, fullReasoning: options.fullReasoning })}\n`);
      if (format === 'pretty') flush();
    },
    line(text) {
      write(`${text}\n`);
      if (format === 'pretty') flush();
    },
    summary(result) {
      write(`${formatSummary(result, { color })}\n`);
      flush();
    },
    drained() {
      // Pending text (under 64 KiB) still goes out at the end of this turn: waiting does not cost the batching.
      return outputDrained(out);
    },
    close() {
      flush();
      return new Promise((resolve) => {
        if (out === process.stdout || out === process.stderr) resolve();
        else out.end(resolve);
      });
    },
  };
}
