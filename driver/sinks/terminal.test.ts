// The workstation sink's progress line (issue 39): on the human view, the check's start between the events; NDJSON
// (a pipe) stays events only, the result carrying the check.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TerminalSink } from './terminal.ts';
import type { HarnessEvent } from '../../shared/events.ts';

const event: HarnessEvent = { type: 'agent', timestamp: '2026-12-02T12:00:00.000Z', message: 'done' };
const after: HarnessEvent = { type: 'agent', timestamp: '2026-12-02T12:00:02.000Z', message: 'after' };
const progress = { phase: 'Checking' as const, at: '2026-12-02T12:00:01.000Z', command: 'npm test' };

async function written(format: 'pretty' | 'json'): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const sink = new TerminalSink(out, { format });
  sink.event({ runId: 'r', seq: 1, event });
  sink.progress('r', progress);
  sink.event({ runId: 'r', seq: 2, event: after });
  await sink.close();
  return text;
}

describe('TerminalSink progress', () => {
  it("the human view prints the check's start in order with the events", async () => {
    const lines = (await written('pretty')).trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('done');
    expect(lines[1]).toBe("12:00:01 check         the sessions are over; running the test case's check: npm test");
    expect(lines[2]).toContain('after');
  });

  it('NDJSON stays events only', async () => {
    const lines = (await written('json')).trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as HarnessEvent).type)).toEqual(['agent', 'agent']);
  });
});
