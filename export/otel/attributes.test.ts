import { describe, expect, it } from 'vitest';
import { wireAttributes } from './attributes.ts';

describe('wireAttributes (issue 34: what the model gateway measured, beside the harness\'s usage)', () => {
  it('the wire account as tcab.wire.*: a class the wire did not report is left out, never 0', () => {
    expect(wireAttributes({ requests: 3, tokens: { input: 10, output: 5, cache_read: 2, cache_write: null, reasoning: 1 }, cost_usd: 0.25, unmetered: 0, throttled: 1, refused: 0 })).toEqual({
      'tcab.wire.requests': 3,
      'tcab.wire.throttled': 1,
      'tcab.wire.refused': 0,
      'tcab.wire.input_tokens': 10,
      'tcab.wire.output_tokens': 5,
      'tcab.wire.cache_read_tokens': 2,
      'tcab.wire.reasoning_tokens': 1,
      'tcab.wire.cost_usd': 0.25,
    });
  });

  it('no gateway: nothing; a run that reported no usage on the wire: counts only', () => {
    expect(wireAttributes(null)).toEqual({});
    expect(wireAttributes(undefined)).toEqual({});
    expect(wireAttributes({ requests: 0, tokens: null, cost_usd: null, unmetered: 0, throttled: 0, refused: 0 })).toEqual({ 'tcab.wire.requests': 0, 'tcab.wire.throttled': 0, 'tcab.wire.refused': 0 });
  });
});
