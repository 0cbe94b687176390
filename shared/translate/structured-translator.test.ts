import { describe, expect, it } from 'vitest';
import type { DraftEvent } from '../events.ts';
import type { SessionResult, StdoutLine } from '../adapter.ts';
import { unknownLine } from './best-effort.ts';
import { parseJsonLine } from './json-line.ts';
import { StructuredTranslator } from './structured-translator.ts';

/** The smallest structured translator: a `session_id` stream whose every good record becomes an agent message. */
class EchoTranslator extends StructuredTranslator {
  line(line: StdoutLine): DraftEvent[] {
    const record = this.sessionRecord(line);
    if (!record) return [unknownLine(line)];
    return [{ type: 'agent', message: `${String(record.type)} in ${this.cwd ?? '?'}` }];
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    return this.summary([]);
  }
}

const stdout = (text: string): StdoutLine => ({ text, json: parseJsonLine(text) });

describe('StructuredTranslator', () => {
  it('starts from the run workdir, no session and an empty result', () => {
    const translator = new EchoTranslator({ workdir: '/work' });
    expect(translator.sessionId()).toBeUndefined();
    expect(translator.line(stdout('{"type":"init"}'))).toEqual([{ type: 'agent', message: 'init in /work' }]);
    expect(translator.finish()).toEqual({ events: [], result: { tokens: null, raw_usage: null, reported_cost_usd: null } });
    expect(new EchoTranslator().line(stdout('{"type":"init"}'))).toEqual([{ type: 'agent', message: 'init in ?' }]);
  });

  it('takes the session id a record names, keeps it across records without one, and reports it at the end', () => {
    const translator = new EchoTranslator({});
    translator.line(stdout('{"type":"a","session_id":"s-1"}'));
    translator.line(stdout('{"type":"b"}'));
    expect(translator.sessionId()).toBe('s-1');
    translator.line(stdout('{"type":"c","session_id":"s-2"}'));
    expect(translator.finish().result).toEqual({ tokens: null, raw_usage: null, reported_cost_usd: null, session_id: 's-2' });
  });

  it.each([
    ['not JSON', 'plain text'],
    ['truncated JSON', '{"type":"a",'],
    ['a JSON array', '[{"type":"a"}]'],
    ['a JSON string', '"text"'],
    ['an empty session id', '{"type":"a","session_id":""}'],
    ['a numeric session id', '{"type":"a","session_id":7}'],
    ['a null session id', '{"type":"a","session_id":null}'],
  ])('publishes %s as `unknown` carrying the line and takes no session id from it', (_what, text) => {
    const translator = new EchoTranslator({});
    const line = stdout(text);
    expect(translator.line(line)).toEqual([{ type: 'unknown', raw: line.json ?? text }]);
    expect(translator.sessionId()).toBeUndefined();
  });

  it('keeps the session it has when a later record is malformed', () => {
    const translator = new EchoTranslator({});
    translator.line(stdout('{"type":"a","session_id":"s-1"}'));
    translator.line(stdout('{"type":"b","session_id":""}'));
    expect(translator.sessionId()).toBe('s-1');
  });
});
