import { describe, expect, it } from 'vitest';
import { TranslationSession, parseJsonLine } from './session.ts';
import { bestEffortTranslator } from './best-effort.ts';
import type { HarnessAdapter } from '../adapter.ts';
import { HarnessEvent } from '../events.ts';

const clock = { now: () => new Date('2026-12-02T10:00:00.000Z') };
const line = (text: string) => ({ text, bytes: Buffer.byteLength(text), truncated: false });

function bestEffortAdapter(): HarnessAdapter {
  return {
    slug: 'demo',
    usageShape: { classes: [], doc: '' },
    invocation: () => ({ argv: ['demo'], env: {}, stdin: 'close', files: [] }),
    createTranslator: () => bestEffortTranslator(),
  };
}

describe('parseJsonLine', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  [1,2]', [1, 2]],
    ['{"a":', undefined],
    ['plain text', undefined],
    ['42', undefined],
    ['', undefined],
  ])('%j -> %j', (text, expected) => {
    expect(parseJsonLine(text)).toEqual(expected);
  });
});

describe('TranslationSession', () => {
  it('best-effort: JSON lines become unknown with the parsed value, text lines with the string', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    expect(s.stdout(line('{"x":1}'))).toEqual([{ type: 'unknown', timestamp: '2026-12-02T10:00:00.000Z', raw: { x: 1 } }]);
    expect(s.stdout(line('hello'))).toEqual([{ type: 'unknown', timestamp: '2026-12-02T10:00:00.000Z', raw: 'hello' }]);
    expect(s.stdout(line(''))).toEqual([]);
  });

  it('a truncated line becomes an unknown with the cut marked and the original size', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    const [event] = s.stdout({ text: '{"a":"xxxx', bytes: 1000, truncated: true });
    expect(event).toMatchObject({ type: 'unknown', original_bytes: 1000 });
    expect((event as { raw: string }).raw).toBe('{"a":"xxxx…[tcab: line truncated, original 1000 bytes]');
    expect(HarnessEvent.safeParse(event).success).toBe(true);
  });

  it('stderr lines become warnings as they arrive; blank ones are dropped', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    expect(s.stderr(line('careful'))).toEqual([{ type: 'warning', timestamp: '2026-12-02T10:00:00.000Z', message: 'careful' }]);
    expect(s.stderr(line('   '))).toEqual([]);
  });

  it('a non-zero exit ends with an error carrying the tail of stderr', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock, failureTailChars: 20 });
    s.stderr(line('first line that scrolls away'));
    s.stderr(line('Error: boom'));
    const { events, summary } = s.finish({ code: 2, signal: null });
    expect(events).toEqual([{ type: 'error', timestamp: '2026-12-02T10:00:00.000Z', message: 'demo exited with code 2:\nError: boom' }]);
    expect(summary.exit).toEqual({ code: 2, signal: null });
    expect(summary.counts).toEqual({ warning: 2, error: 1 });
  });

  it('falls back to the stdout tail when stderr is empty, and names a kill signal', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    s.stdout(line('fatal: no model'));
    const { events } = s.finish({ code: null, signal: 'SIGKILL' });
    expect(events.at(-1)).toMatchObject({ type: 'error', message: 'demo was killed by SIGKILL:\nfatal: no model' });
  });

  it('a zero exit adds no error, and finish cannot run twice', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    expect(s.finish({ code: 0, signal: null }).events).toEqual([]);
    expect(() => s.finish({ code: 0, signal: null })).toThrow(/twice/);
  });
});
