import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TranslationSession } from './session.ts';
import { bestEffortTranslator } from './best-effort.ts';
import type { HarnessAdapter, SessionTranslator, StdoutLine } from '../adapter.ts';
import { HarnessEvent } from '../events.ts';
import { loadAdapter } from '../../harnesses/registry.ts';

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

  it('stderr lines become warnings as their diagnostic ends (the next one starts, a quiet gap, the end); blank ones are dropped', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    expect(s.stderr(line('careful'))).toEqual([]);
    expect(s.stderrPending()).toBe(true);
    expect(s.stderr(line('also careful'))).toEqual([{ type: 'warning', timestamp: '2026-12-02T10:00:00.000Z', message: 'careful' }]);
    expect(s.stderr(line('   '))).toEqual([]);
    expect(s.stderrIdle()).toEqual([{ type: 'warning', timestamp: '2026-12-02T10:00:00.000Z', message: 'also careful' }]);
    expect(s.stderrPending()).toBe(false);
    expect(s.stderrIdle()).toEqual([]);
  });

  it('issue 21: a stack trace is one warning with every line of it, and the end of the session flushes the open one first', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock });
    const trace = ['DeprecationWarning: AI SDK Warning: Deprecated', '      at iX (/$bunfs/root/chunk.js:26:46952)', '      at transform (/$bunfs/root/chunk.js:44:43027)'];
    const emitted = [...trace, '', 'Error: boom', '    at main (x.js:1:1)'].flatMap((text) => s.stderr(line(text)));
    expect(emitted).toEqual([{ type: 'warning', timestamp: '2026-12-02T10:00:00.000Z', message: trace.join('\n') }]);
    const { events, summary } = s.finish({ code: 1, signal: null });
    expect(events.map((e) => (e.type === 'warning' || e.type === 'error' ? [e.type, e.message] : [e.type]))).toEqual([
      ['warning', 'Error: boom\n    at main (x.js:1:1)'],
      ['error', `demo exited with code 1:\n${trace.join('\n')}\n\nError: boom\n    at main (x.js:1:1)`],
    ]);
    expect(summary.counts).toEqual({ warning: 2, error: 1 });
  });

  it('a non-zero exit ends with an error carrying the tail of stderr', () => {
    const s = new TranslationSession(bestEffortAdapter(), {}, { clock, failureTailChars: 20 });
    s.stderr(line('first line that scrolls away'));
    s.stderr(line('Error: boom'));
    s.stderrIdle(); // a quiet gap published the last warning before the exit
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

/** A pure test adapter: each line's events come from `map`, the session's end from `end`. */
function adapterOf(map: (line: StdoutLine) => unknown, end: () => unknown = () => ({ events: [], result: { tokens: null, raw_usage: null, reported_cost_usd: null } })): HarnessAdapter {
  return {
    ...bestEffortAdapter(),
    createTranslator: () => ({ line: map as SessionTranslator['line'], sessionId: () => 'sess-1', finish: end as SessionTranslator['finish'] }),
  };
}

function translateLines(adapter: HarnessAdapter, texts: string[]) {
  const session = new TranslationSession(adapter, {}, { clock });
  const events = texts.flatMap((text) => session.stdout(line(text)));
  const end = session.finish({ code: 0, signal: null });
  return { events, end: end.events, summary: end.summary };
}

describe('TranslationSession against hostile lines and adapters', () => {
  const CLAUDE_FIXTURE = join(import.meta.dirname, '../../harnesses/claude/fixtures/claude-2.1.332-tools.jsonl');
  const deepLine = '['.repeat(100_000) + ']'.repeat(100_000);

  it('finding 3: a deeply nested JSON line after a real Claude transcript costs one unknown with the line as text, never the session', async () => {
    const claude = await loadAdapter('claude');
    const texts = readFileSync(CLAUDE_FIXTURE, 'utf8').split('\n');
    const plain = translateLines(claude, texts);
    const hostile = translateLines(claude, [...texts, deepLine]);
    expect(plain.events.length).toBeGreaterThan(5);
    expect(hostile.events).toEqual([...plain.events, { type: 'unknown', timestamp: '2026-12-02T10:00:00.000Z', session_id: expect.any(String), raw: deepLine }]);
    expect(hostile.end).toEqual(plain.end);
    expect(hostile.summary.result).toEqual(plain.summary.result);
    // What leaves the engine can be serialized and checked by every consumer.
    for (const event of hostile.events) expect(HarnessEvent.safeParse(JSON.parse(JSON.stringify(event))).success).toBe(true);
  });

  it('finding 3: an adapter that throws on a line costs that line only: an unknown with the line as parsed, then the next line as usual', () => {
    const adapter = adapterOf((l) => {
      if (l.text.includes('boom')) throw new TypeError("Cannot read properties of undefined (reading 'content')");
      return [{ type: 'agent', message: l.text }];
    });
    const { events, summary } = translateLines(adapter, ['{"boom":[1,2]}', 'boom as text', 'fine']);
    expect(events.map(({ timestamp: _t, ...e }) => e)).toEqual([
      { type: 'unknown', session_id: 'sess-1', raw: { boom: [1, 2] } },
      { type: 'unknown', session_id: 'sess-1', raw: 'boom as text' },
      { type: 'agent', session_id: 'sess-1', message: 'fine' },
    ]);
    expect(summary.counts).toEqual({ unknown: 2, agent: 1 });
  });

  it('finding 8: an event that breaks the contract becomes one unknown with the record that produced it; valid siblings stay', () => {
    const adapter = adapterOf((l) => {
      if (l.text.startsWith('{"cmd"')) return [{ type: 'agent', message: 'before' }, { type: 'command', command: 'make', exit_code: 1.5 }, { type: 'agent', message: 42 }];
      if (l.text === 'text line') return [{ type: 'agent', message: null }];
      return [{ type: 'reasoning', message: 'ok', invented_field: true }];
    });
    const { events } = translateLines(adapter, ['{"cmd":"make","code":1.5}', 'text line', '{"any":1}']);
    expect(events.map(({ timestamp: _t, ...e }) => e)).toEqual([
      { type: 'agent', session_id: 'sess-1', message: 'before' },
      { type: 'unknown', session_id: 'sess-1', raw: { cmd: 'make', code: 1.5 } },
      { type: 'unknown', session_id: 'sess-1', raw: 'text line' },
      { type: 'unknown', session_id: 'sess-1', raw: { any: 1 } },
    ]);
    for (const event of events) expect(HarnessEvent.safeParse(event).success).toBe(true);
  });

  it('finding 8: a line JSON.parse reads as Infinity (not JSON) keeps its text; non-objects and non-arrays from an adapter are unknown too', () => {
    const adapter = adapterOf((l) => (l.text.startsWith('{') ? [{ type: 'command', command: 'x', exit_code: Infinity }] : 'not a list'));
    const { events } = translateLines(adapter, ['{"exit":1e999}', 'plain']);
    expect(events.map(({ timestamp: _t, ...e }) => e)).toEqual([
      { type: 'unknown', session_id: 'sess-1', raw: '{"exit":1e999}' },
      { type: 'unknown', session_id: 'sess-1', raw: 'plain' },
    ]);
  });

  it('finding 8: invalid events at the end of a session each become an unknown with their JSON copy; a throwing end is a warning', () => {
    const invalid = translateLines(adapterOf(() => [], () => ({ events: [{ type: 'command', command: 'ls', exit_code: 0.5 }, { type: 'write', path: 7 }], result: { tokens: null, raw_usage: null, reported_cost_usd: null } })), []);
    expect(invalid.end.map(({ timestamp: _t, ...e }) => e)).toEqual([
      { type: 'unknown', session_id: 'sess-1', raw: { type: 'command', command: 'ls', exit_code: 0.5 } },
      { type: 'unknown', session_id: 'sess-1', raw: { type: 'write', path: 7 } },
    ]);
    // One nested deeper than a line may be is kept as its JSON text.
    let deep: unknown = 'x';
    for (let i = 0; i < 1000; i++) deep = [deep];
    const tooDeep = translateLines(adapterOf(() => [], () => ({ events: [{ type: 'unknown', raw: deep, original_bytes: -1 }], result: { tokens: null, raw_usage: null, reported_cost_usd: null } })), []);
    expect(tooDeep.end).toEqual([expect.objectContaining({ type: 'unknown', raw: JSON.stringify({ type: 'unknown', raw: deep, original_bytes: -1 }) })]);
    const throwing = translateLines(adapterOf(() => [{ type: 'agent', message: 'hi' }], () => { throw new Error('no usage record'); }), ['x']);
    expect(throwing.events).toHaveLength(1);
    expect(throwing.end).toEqual([expect.objectContaining({ type: 'warning', code: 'translator_failed', message: expect.stringContaining('no usage record') })]);
    expect(throwing.summary.result).toEqual({ tokens: null, raw_usage: null, reported_cost_usd: null });
  });

  it('finding 8: a session id the contract refuses is left off instead of costing every event', () => {
    const adapter: HarnessAdapter = { ...bestEffortAdapter(), createTranslator: () => ({ line: () => [{ type: 'agent', message: 'hi' }], sessionId: () => '', finish: () => ({ events: [], result: { tokens: null, raw_usage: null, reported_cost_usd: null } }) }) };
    const session = new TranslationSession(adapter, {}, { clock });
    expect(session.stdout(line('x'))).toEqual([{ type: 'agent', timestamp: '2026-12-02T10:00:00.000Z', message: 'hi' }]);
  });

  it('finding 12: 64 stdout and stderr lines of 2 MiB leave the failure tail holding kilobytes, not 128 MiB, and the error still ends with the last words', async () => {
    // In its own process with --expose-gc, so retained memory is measured after a full collection: the heap plus
    // external strings (Node keeps long decoded lines outside the heap), without Buffers still awaiting release.
    const here = pathToFileURL(import.meta.dirname).href;
    const script = `
      import { TranslationSession } from '${here}/session.ts';
      import { LineSplitter } from '${here}/lines.ts';
      const result = { tokens: null, raw_usage: null, reported_cost_usd: null };
      const adapter = { slug: 'demo', usageShape: { classes: [], doc: '' }, invocation: () => ({}),
        createTranslator: () => ({ line: () => [], sessionId: () => undefined, finish: () => ({ events: [], result }) }) };
      const session = new TranslationSession(adapter, {});
      const splitter = new LineSplitter();
      globalThis.gc();
      const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.external - m.arrayBuffers; };
      const before = used();
      for (let i = 0; i < 64; i++) {
        // Fresh strings per line, as a real stream makes them.
        for (const line of splitter.push(Buffer.concat([Buffer.alloc(2 << 20, 0x61 + (i % 26)), Buffer.from('\\n')]))) {
          session.stdout(line);
          session.stderr(line);
        }
      }
      for (const line of splitter.push('fatal: out of quota\\n')) session.stderr(line);
      // Node releases external strings and Buffers a turn after the collection that freed them: poll, bounded.
      let retained = Infinity;
      for (let round = 0; round < 50 && retained >= 16 << 20; round++) {
        await new Promise((resolve) => setImmediate(resolve));
        globalThis.gc();
        retained = Math.min(retained, used() - before);
      }
      const { events } = session.finish({ code: 1, signal: null });
      process.stdout.write(JSON.stringify({ retained, message: events.at(-1).message }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { maxBuffer: 1 << 20 });
    const { retained, message } = JSON.parse(stdout) as { retained: number; message: string };
    expect(retained).toBeLessThan(16 * 1024 * 1024);
    expect(message.startsWith('demo exited with code 1:\n')).toBe(true);
    expect(message.endsWith('\nfatal: out of quota')).toBe(true);
    expect(message.length).toBeLessThanOrEqual('demo exited with code 1:\n'.length + 4000);
  });
});
