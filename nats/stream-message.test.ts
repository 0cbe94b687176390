// The reader's pure core: one message in, one bounded item out, whatever the bytes are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HarnessEvent } from '../shared/events.ts';
import { HEADER } from './envelope.ts';
import { MAX_JSON_DEPTH, MAX_RAW_CHARS, MAX_REASON_CHARS, MAX_SUBJECT_CHARS, decodeStreamMessage } from './stream-message.ts';
import { jsonTextNestsDeeperThan as jsonNestsDeeperThan } from '../shared/json-depth.ts';
import type { StreamItem, StreamMessage } from './stream-message.ts';

const now = () => new Date('2026-12-04T12:00:00.000Z');
const bytes = (text: string) => new TextEncoder().encode(text);
const message = (data: Uint8Array | string, headers: Record<string, string> = { [HEADER.runId]: 'run-1', [HEADER.seq]: '7' }, subject = 'tcab.run.run-1.event.agent'): StreamMessage => ({
  subject,
  header: (name) => headers[name],
  data: typeof data === 'string' ? bytes(data) : data,
});
const invalid = (item: StreamItem) => {
  if (item.kind !== 'invalid') throw new Error(`expected an invalid item, got ${item.kind}`);
  return item;
};

describe('decodeStreamMessage', () => {
  it('finding 3: a deeply nested payload becomes one bounded invalid item, before JSON.parse, zod or JSON.stringify recurse', () => {
    const nested = '['.repeat(100_000) + ']'.repeat(100_000);
    const item = invalid(decodeStreamMessage(message(nested), now));
    expect(item).toMatchObject({ subject: 'tcab.run.run-1.event.agent', runId: 'run-1', seq: 7, isResult: false, reason: `the payload nests deeper than ${MAX_JSON_DEPTH} levels` });
    expect(item.event.original_bytes).toBe(200_000);
    expect(HarnessEvent.safeParse(item.event).success).toBe(true);
    expect(JSON.stringify(item.event).length).toBeLessThan(MAX_RAW_CHARS + 200);
    // The same depth inside a valid event (e.g. an unknown's raw) is refused the same way.
    const inEvent = `{"type":"unknown","timestamp":"2026-12-04T12:00:00.000Z","raw":${nested}}`;
    expect(invalid(decodeStreamMessage(message(inEvent), now)).reason).toContain('nests deeper');
  });

  it('finding 3: invalid UTF-8, non-JSON and contract-breaking payloads each become an invalid item naming what is wrong', () => {
    expect(invalid(decodeStreamMessage(message(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), now)).reason).toBe('the payload is not valid UTF-8');
    expect(invalid(decodeStreamMessage(message('not json'), now))).toMatchObject({ reason: expect.stringMatching(/^the payload is not JSON/), event: { type: 'unknown', raw: 'not json' } });
    const breaking = { type: 'command', timestamp: '2026-12-04T12:00:00.000Z', command: 'ls', exit_code: 1.5 };
    expect(invalid(decodeStreamMessage(message(JSON.stringify(breaking)), now))).toMatchObject({ reason: expect.stringContaining('exit_code:'), event: { type: 'unknown', raw: breaking } });
  });

  it('finding 3: a huge payload and huge subject, headers and issue lists are shown bounded', () => {
    const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`.repeat(50), i]));
    const huge = JSON.stringify({ type: 'agent', timestamp: 'yesterday', ...keys });
    const item = invalid(decodeStreamMessage(message(huge, { [HEADER.runId]: 'r'.repeat(100_000), [HEADER.seq]: 'NaN' }, `tcab.run.${'x'.repeat(100_000)}.event.agent`), now));
    expect(item.subject.length).toBeLessThanOrEqual(MAX_SUBJECT_CHARS + 1);
    expect(item.runId.length).toBeLessThanOrEqual(MAX_SUBJECT_CHARS + 1);
    expect(item.seq).toBe(0);
    expect(item.reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS + 1);
    expect(item.reason).toContain('timestamp:');
    expect(item.event.original_bytes).toBe(bytes(huge).length);
  });

  it('finding 3: headers that cannot be decoded cost the headers, not the message', () => {
    const event = { type: 'agent', timestamp: '2026-12-04T12:00:00.000Z', message: 'hi' };
    const item = decodeStreamMessage({ subject: 's', header: () => { throw new Error('bad header block'); }, data: bytes(JSON.stringify(event)) }, now);
    expect(item).toEqual({ kind: 'event', runId: '', seq: 0, event });
  });

  it('a result names its attempt only when its Nats-Msg-Id is a result id of its run with an attempt of the grammar', () => {
    const result = {
      run_id: 'run-1', harness_slug: 'gg', harness_version: null, model: 'm', canonical_model: null, outcome: 'succeeded', message: '', auth_mode: null, sessions: [], session_ids: [],
      exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
      started_at: '2026-12-04T12:00:00.000Z', finished_at: '2026-12-04T12:00:00.000Z', event_count: 0,
    };
    const attemptOf = (msgId: string) => {
      const item = decodeStreamMessage(message(JSON.stringify(result), { [HEADER.runId]: 'run-1', [HEADER.kind]: 'result', [HEADER.msgId]: msgId }, 'tcab.run.run-1.result'), now);
      if (item.kind !== 'result') throw new Error(`expected a result, got ${item.kind}`);
      return item.attempt;
    };
    expect(attemptOf('run-1:0b7d1f3e-0000-4000-8000-00000000e41e:result')).toBe('0b7d1f3e-0000-4000-8000-00000000e41e');
    expect(attemptOf('run-1:result')).toBeUndefined();
    // Hostile ids: huge, a newline, a ':' (another field smuggled in), another run's, an event's.
    for (const msgId of [`run-1:${'u'.repeat(100_000)}:result`, 'run-1:uid\nforged:result', 'run-1:a:b:result', 'run-2:uid:result', 'run-1:uid:7']) expect(attemptOf(msgId), msgId.slice(0, 40)).toBeUndefined();
  });

  it('finding 11: a malformed result record is an invalid result naming the field, bounded, not an event', () => {
    const result = {
      run_id: 'run-1', harness_slug: 'claude', harness_version: '1', model: 'm', canonical_model: null, outcome: 'exploded', message: '', auth_mode: 'api-key', sessions: [], session_ids: [],
      exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
      started_at: '2026-12-04T12:00:00.000Z', finished_at: '2026-12-04T12:00:00.000Z', event_count: 2,
    };
    const item = invalid(decodeStreamMessage(message(JSON.stringify(result), { [HEADER.runId]: 'run-1', [HEADER.kind]: 'result' }, 'tcab.run.run-1.result'), now));
    expect(item.isResult).toBe(true);
    expect(item.reason).toBe('outcome: Invalid option: expected one of "succeeded"|"harness_failed"|"infrastructure_failed"|"timed_out"|"cancelled"|"budget_exceeded"');
    // A record wrong everywhere: the first fields, then a count, within the bound.
    const wrong = invalid(decodeStreamMessage(message('{"run_id":"run-1"}', {}, 'tcab.run.run-1.result'), now));
    expect(wrong.reason).toMatch(/^harness_slug: Invalid input/);
    expect(wrong.reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS + 1);
  });

  it('finding 3: any bytes, any headers: never throws, and whatever is printed is a valid, serializable event of bounded size', () => {
    const payloads = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.json().map(bytes),
      fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.constantFrom('[', '{"a":')).map(([n, open]) => bytes(open.repeat(n))),
      fc.record({ type: fc.constantFrom(...HarnessEvent.options.map((o) => o.shape.type.value)), timestamp: fc.constant('2026-12-04T12:00:00.000Z'), message: fc.anything() }).map((o) => bytes(JSON.stringify(o) ?? 'null')),
    );
    fc.assert(
      fc.property(payloads, fc.dictionary(fc.constantFrom(HEADER.runId, HEADER.seq, HEADER.kind), fc.string()), fc.string(), (data, headers, subject) => {
        const item = decodeStreamMessage({ subject, header: (n) => headers[n], data }, now);
        const printed = item.kind === 'result' ? item.result : item.event;
        expect(() => JSON.stringify(printed)).not.toThrow();
        if (item.kind !== 'result') expect(HarnessEvent.safeParse(printed).success).toBe(true);
        if (item.kind === 'invalid') expect(JSON.stringify(item.event).length).toBeLessThan(3 * MAX_RAW_CHARS + 200);
      }),
      { seed: 19, numRuns: 300 },
    );
  });
});

describe('the Tcab-Attempt header (issue 35)', () => {
  const event = JSON.stringify({ type: 'agent', timestamp: '2026-12-04T12:00:00.000Z', message: 'hi' });
  it.each([
    ['2', 2],
    ['1', 1],
    ['999', 999],
    ['0', undefined],
    ['1000', undefined],
    ['02', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    ['1e2', undefined],
    [' 2', undefined],
    ['2\r\nNats-Msg-Id: forged', undefined],
    ['9'.repeat(100_000), undefined],
  ])('%j gives attempt %s; the event itself is read either way', (value, attempt) => {
    const item = decodeStreamMessage(message(event, { [HEADER.runId]: 'run-1', [HEADER.seq]: '3', [HEADER.attempt]: value }), now);
    expect(item).toMatchObject({ kind: 'event', seq: 3 });
    expect(item.kind === 'event' ? item.attempt : 'not an event').toBe(attempt);
  });

  it('a header that throws when read is no attempt', () => {
    const item = decodeStreamMessage({ subject: 'tcab.run.run-1.event.agent', header: (name) => { if (name === HEADER.attempt) throw new Error('bad header bytes'); return name === HEADER.seq ? '1' : undefined; }, data: bytes(event) }, now);
    expect(item).toMatchObject({ kind: 'event', seq: 1 });
    expect(item.kind === 'event' ? item.attempt : 'not an event').toBeUndefined();
  });
});

describe('jsonNestsDeeperThan', () => {
  it('counts brackets outside strings only, escapes included', () => {
    expect(jsonNestsDeeperThan('[[[]]]', 3)).toBe(false);
    expect(jsonNestsDeeperThan('[[[[]]]]', 3)).toBe(true);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '[[[[[[\\"[[[[' }), 1)).toBe(false);
    expect(jsonNestsDeeperThan('[{"a":[{"b":[]}]}]', 4)).toBe(true);
  });
});
