// `--atif FILE` of `tcab run` and `tcab translate`: the run's events (already scrubbed: sinks only ever get
// scrubbed records) kept until the end, then written as one ATIF trajectory (export/atif).
import { writeFileSync } from 'node:fs';
import { toAtif } from '../../export/atif/index.ts';
import type { AtifInput } from '../../export/atif/index.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import type { EventSink, SequencedEvent } from '../../driver/sinks/sink.ts';

export function writeAtifFile(file: string, input: AtifInput): void {
  writeFileSync(file, `${JSON.stringify(toAtif(input), null, 2)}\n`);
}

/** A sink next to the terminal's: writes the trajectory when the run closes its sinks, result or not. */
export class AtifFileSink implements EventSink {
  private readonly events: HarnessEvent[] = [];
  private runId: string | undefined;
  private runResult: RunResult | undefined;
  private readonly file: string;
  private readonly spec: AtifInput['spec'];

  constructor(file: string, spec: AtifInput['spec']) {
    this.file = file;
    this.spec = spec;
  }

  event(record: SequencedEvent): void {
    this.runId = record.runId;
    this.events.push(record.event);
  }

  result(result: RunResult): void {
    this.runResult = result;
  }

  async close(): Promise<void> {
    writeAtifFile(this.file, { runId: this.runResult?.run_id ?? this.runId, events: this.events, result: this.runResult, spec: this.spec });
  }
}
