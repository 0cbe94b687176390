// Reading the components' own log lines back (shared/log.ts: one pino JSON object per line) in tests.
import { Writable } from 'node:stream';

export type LogLine = Record<string, unknown> & { level?: string; msg?: string; component?: string };

/** A destination for createLogger whose lines a test reads back, parsed. */
export function capture(): { lines: LogLine[]; destination: Writable } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...jsonLines(chunk.toString('utf8')));
      done();
    },
  });
  return { lines, destination };
}

/** Every line of a process's stderr as JSON: a line that is not JSON throws, so a stray text line fails the test. */
export function jsonLines(text: string): LogLine[] {
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine);
}

/** The lines one component logged (stderr may also carry other JSON: the driver's result line). */
export function logLinesOf(component: string, text: string): LogLine[] {
  return jsonLines(text).filter((line) => line.component === component);
}
