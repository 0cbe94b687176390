// The workstation sink: the `tcab translate` view (human on a TTY, NDJSON when piped), result last.
import { writeFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { RunResult } from '../../shared/run.ts';
import { createEventWriter } from '../../shared/format/event-writer.ts';
import type { EventFormat } from '../../shared/format/event-writer.ts';
import type { EventSink, SequencedEvent } from './sink.ts';
import { formatRunResult } from '../../shared/format/run-result.ts';
import { formatProgress } from '../../shared/format/human.ts';
import type { RunProgress } from '../../shared/run-progress.ts';

export interface TerminalSinkOptions {
  format: EventFormat;
  fullReasoning?: boolean;
  /** With NDJSON output the result goes here (a file), or to stderr as one JSON line. */
  resultFile?: string;
}

export class TerminalSink implements EventSink {
  private readonly writer;
  private readonly out: Writable & { isTTY?: boolean };
  private readonly options: TerminalSinkOptions;

  constructor(out: Writable & { isTTY?: boolean }, options: TerminalSinkOptions) {
    this.out = out;
    this.options = options;
    this.writer = createEventWriter(out, options.format, { fullReasoning: options.fullReasoning });
  }

  event(record: SequencedEvent): void {
    this.writer.event(record.event);
  }

  /** On the human view, a line in order with the events; NDJSON stays events only (the result carries the check). */
  progress(_runId: string, progress: RunProgress): void {
    if (this.options.format === 'pretty') this.writer.line(formatProgress(progress, { color: this.out.isTTY === true && !process.env.NO_COLOR }));
  }

  result(result: RunResult): void {
    if (this.options.resultFile) writeFileSync(this.options.resultFile, `${JSON.stringify(result, null, 2)}\n`);
    if (this.options.format === 'json') {
      if (!this.options.resultFile) process.stderr.write(`${JSON.stringify(result)}\n`);
      return;
    }
    this.out.write(`${formatRunResult(result, { color: this.out.isTTY === true && !process.env.NO_COLOR })}\n`);
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
