import { describe, expect, it } from 'vitest';
import { ExportAdmission, TokenBucket } from './otel-budget.ts';

describe('token bucket', () => {
  it('admits a burst up to its capacity, then refills at its rate, never above the capacity', () => {
    const budget = new TokenBucket({ capacity: 3, perSecond: 2, now: 0 });
    expect([0, 0, 0, 0].map(() => budget.take(0))).toEqual([true, true, true, false]);
    expect(budget.take(499)).toBe(false); // 0.998 of a token
    expect(budget.take(500)).toBe(true); // one token after 500 ms at 2/s
    expect(budget.take(500)).toBe(false);
    expect([1, 2, 3, 4].map(() => budget.take(60_000))).toEqual([true, true, true, false]); // a long pause refills to 3, not 120
  });

  it('a clock that goes back refills nothing', () => {
    const budget = new TokenBucket({ capacity: 1, perSecond: 1000, now: 100 });
    expect(budget.take(100)).toBe(true);
    expect(budget.take(50)).toBe(false);
  });

  it('a rate of 0 admits only the first burst', () => {
    const budget = new TokenBucket({ capacity: 2, perSecond: 0, now: 0 });
    expect([0, 1e6, 2e6].map((t) => budget.take(t))).toEqual([true, true, false]);
  });
});

describe('export admission', () => {
  const env = { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2', OTEL_SPAN_EVENT_COUNT_LIMIT: '3', TCAB_OTEL_TOOL_SPANS_PER_SECOND: '0', TCAB_OTEL_MESSAGES_PER_SECOND: '1000' };

  it('tool spans get one export batch as a burst, messages a span’s event limit, each with its own rate', () => {
    const admission = new ExportAdmission(env, 0);
    expect(['command', 'read', 'write', 'skill'].map((t) => admission.admit(t as 'command', 0))).toEqual(['trace', 'trace', 'tool-left-out', 'tool-left-out']);
    expect(['agent', 'reasoning', 'agent', 'agent'].map((t) => admission.admit(t as 'agent', 0))).toEqual(['trace', 'trace', 'trace', 'message-left-out']);
    // 1 ms later the message bucket has one token again; the tool bucket (rate 0) has none.
    expect(admission.admit('agent', 1)).toBe('trace');
    expect(admission.admit('search', 1e6)).toBe('tool-left-out');
  });

  it('stages, subagents, warnings and errors are always trace data; raw output never is', () => {
    const admission = new ExportAdmission({ ...env, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1', OTEL_SPAN_EVENT_COUNT_LIMIT: '1' }, 0);
    for (let i = 0; i < 5; i++) {
      expect(['system', 'orchestration', 'warning', 'error'].map((t) => admission.admit(t as 'system', 0))).toEqual(['trace', 'trace', 'trace', 'trace']);
      expect(admission.admit('unknown', 0)).toBe('raw');
    }
  });

  it('unset or malformed variables mean the defaults (512 tool spans, 1024 messages at once)', () => {
    const admission = new ExportAdmission({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'lots', OTEL_SPAN_EVENT_COUNT_LIMIT: '-4' }, 0);
    const tools = Array.from({ length: 513 }, () => admission.admit('command', 0));
    const messages = Array.from({ length: 1025 }, () => admission.admit('agent', 0));
    expect([tools.lastIndexOf('trace'), tools.at(-1)]).toEqual([511, 'tool-left-out']);
    expect([messages.lastIndexOf('trace'), messages.at(-1)]).toEqual([1023, 'message-left-out']);
  });

  it('never gives tool spans a burst larger than the SDK queue (the SDK exports at most a queue at once too)', () => {
    const admission = new ExportAdmission({ OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100', TCAB_OTEL_TOOL_SPANS_PER_SECOND: '0' }, 0);
    expect(Array.from({ length: 6 }, () => admission.admit('write', 0)).filter((a) => a === 'trace')).toHaveLength(4);
  });
});
