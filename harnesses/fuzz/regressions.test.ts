// Counterexamples the property suite found (harnesses/translators.property.test.ts), each replayed by name with the
// recording and mutation fast-check shrank it to, through the same oracles: the translator or the oracle was wrong,
// and these keep it from coming back without a long `npm run fuzz`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAdapter } from '../registry.ts';
import { applyPlan } from './mutations.ts';
import type { Mutation } from './mutations.ts';
import { allEvents, contractViolations, inventions, translate } from './oracles.ts';

function recording(slug: string, file: string): Buffer[] {
  const text = readFileSync(join(import.meta.dirname, '..', slug, 'fixtures', file), 'utf8');
  return text.split('\n').filter((l) => l.length > 0).map((l) => Buffer.from(l));
}

/** The wrong-typed-field property for one mutation: the mutated line, and what the oracles say about its translation. */
async function replay(slug: string, file: string, mutation: Mutation) {
  const adapter = await loadAdapter(slug);
  const lines = recording(slug, file);
  const mutated = applyPlan(lines, [mutation]);
  const at = mutated.findIndex((line, i) => !line.equals(lines[i]!));
  const references = [translate(adapter, lines, {}), translate(adapter, lines.toSpliced(at, 1), {})];
  const t = translate(adapter, mutated, {});
  return { record: JSON.parse(mutated[at]!.toString('utf8')) as Record<string, unknown>, t, violations: [...contractViolations(t), ...inventions(t, references)] };
}

describe('cursor: an assistant message.content that is a string is unknown, not an agent message', () => {
  it.each<[string, Mutation]>([
    ['FUZZ_SEED=1024204973', { kind: 'wrong-type', line: 19, node: 327547, value: 0 }],
    ['FUZZ_SEED=1593133268', { kind: 'wrong-type', line: 64769, node: 19, value: 0 }],
    ['FUZZ_SEED=777 FUZZ_PATH=7:6', { kind: 'wrong-type', line: 5, node: 3, value: 0 }],
  ])('%s', async (_, mutation) => {
    const { record, t, violations } = await replay('cursor', 'cursor-documented-session.jsonl', mutation);
    expect(record.message).toEqual({ role: 'assistant', content: 'true' }); // the case as found
    expect(violations).toEqual([]);
    expect(allEvents(t).filter((e) => e.type === 'agent' && e.message === 'true')).toEqual([]);
    expect(allEvents(t).some((e) => e.type === 'unknown' && JSON.stringify(e.raw) === JSON.stringify(record))).toBe(true);
  });
});

describe("claude error-400: a recorded cost of 0 is no count, so a fraction there is no wrong type", () => {
  it.each<[string, Mutation]>([
    ['FUZZ_SEED=5', { kind: 'wrong-type', line: 446408, node: 427283, value: 3 }],
    ['FUZZ_SEED=11', { kind: 'wrong-type', line: 155192, node: 406854, value: 41946 }],
    ['FUZZ_SEED=77', { kind: 'wrong-type', line: 823748, node: 124847, value: 224931 }],
  ])('%s', async (_, mutation) => {
    const { record, violations } = await replay('claude', 'claude-2.1.197-error-400.jsonl', mutation);
    expect(record.type).toBe('result');
    // Once 1.5; now a value of another JSON type, which the translator must not read as a cost.
    expect(typeof record.total_cost_usd).not.toBe('number');
    expect(violations).toEqual([]);
  });
});

describe('opencode (and kilo, its translator): a completed bash call whose exit is null claims no success', () => {
  it.each<[string, string, string, Mutation]>([
    ['FUZZ_SEED=328713745 kilo', 'kilo', 'kilo-7.7.7-run-json.jsonl', { kind: 'wrong-type', line: 999981, node: 291997, value: 621867 }],
    ['FUZZ_SEED=328713745 opencode', 'opencode', 'opencode-1.18.33-tools.jsonl', { kind: 'wrong-type', line: 805403, node: 496455, value: 223535 }],
  ])('%s', async (_, slug, file, mutation) => {
    const { record, t, violations } = await replay(slug, file, mutation);
    const state = (record.part as { state: { status: string; metadata: { exit: unknown } } }).state;
    expect([state.status, state.metadata.exit]).toEqual(['completed', null]); // the case as found (exit 3 before)
    expect(violations).toEqual([]);
    expect(allEvents(t).filter((e) => e.type === 'command' && e.command === 'exit 3')).toEqual([expect.not.objectContaining({ is_success: expect.anything() })]);
  });
});
