import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { RunSpec } from '../run.ts';
import { EvaluationSpec, InlineEvaluationSpec } from './schema.ts';
import type { EvaluationSpecInput } from './schema.ts';
import { CELL_LABEL, EVALUATION_LABEL, MODEL_ANNOTATION, REPEAT_LABEL, TEST_CASE_LABEL, cellKey, evaluationLabelValue, evaluationSlots } from './slots.ts';

const input = {
  matrix: [
    { harness: 'claude', models: ['claude-sonnet-4-5', 'anthropic/claude-opus-4.1'] },
    { harness: 'gg', models: ['stub'] },
  ],
  testCases: [
    { name: 'hello', prompt: 'Create hello.txt', testCase: { check: { command: 'grep -q hello hello.txt' } } },
    { name: 'sum', prompt: 'Write sum.py' },
  ],
  repeats: 2,
  template: { maxRuntimeSeconds: 600, retries: 1 },
} satisfies EvaluationSpecInput;
const spec = InlineEvaluationSpec.parse(input);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('evaluationSlots', () => {
  const slots = evaluationSlots('compare-claude', spec);

  it('one slot per cell x test case x repeat, in matrix order, each a valid Run spec with the template', () => {
    expect(slots.map((s) => `${s.cell.harness}/${s.cell.model}/${s.testCase}/${s.repeat}`)).toEqual([
      'claude/claude-sonnet-4-5/hello/1', 'claude/claude-sonnet-4-5/hello/2', 'claude/claude-sonnet-4-5/sum/1', 'claude/claude-sonnet-4-5/sum/2',
      'claude/anthropic/claude-opus-4.1/hello/1', 'claude/anthropic/claude-opus-4.1/hello/2', 'claude/anthropic/claude-opus-4.1/sum/1', 'claude/anthropic/claude-opus-4.1/sum/2',
      'gg/stub/hello/1', 'gg/stub/hello/2', 'gg/stub/sum/1', 'gg/stub/sum/2',
    ]);
    const first = RunSpec.parse(slots[0]!.spec);
    expect(first).toMatchObject({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Create hello.txt', maxRuntimeSeconds: 600, retries: 1, testCase: { check: { command: 'grep -q hello hello.txt', timeoutSeconds: 600 } } });
    expect(RunSpec.parse(slots[2]!.spec)).not.toHaveProperty('testCase');
  });

  it('names are DNS labels, unique, and the same every time (re-applying names the same Runs)', () => {
    const names = slots.map((s) => s.name);
    for (const name of names) expect(name).toMatch(DNS_LABEL);
    expect(new Set(names).size).toBe(names.length);
    expect(evaluationSlots('compare-claude', spec).map((s) => s.name)).toEqual(names);
    // Another evaluation, or the same slot in another position of the matrix, is its own Run / the same Run.
    expect(evaluationSlots('other', spec).map((s) => s.name).filter((n) => names.includes(n))).toEqual([]);
    const reordered = InlineEvaluationSpec.parse({ ...input, matrix: [...input.matrix].reverse() });
    expect(new Set(evaluationSlots('compare-claude', reordered).map((s) => s.name))).toEqual(new Set(names));
  });

  it('a test case or the template edited renames exactly the Runs it changes; a long name shared to 40 characters does not collide', () => {
    const edited = InlineEvaluationSpec.parse({ ...input, testCases: [input.testCases[0]!, { ...input.testCases[1]!, prompt: 'Write sum.py, tested' }] });
    const before = new Map(slots.map((s) => [`${s.cell.harness}/${s.cell.model}/${s.testCase}/${s.repeat}`, s.name]));
    const renamed = evaluationSlots('compare-claude', edited).filter((s) => before.get(`${s.cell.harness}/${s.cell.model}/${s.testCase}/${s.repeat}`) !== s.name);
    expect(renamed.map((s) => s.testCase)).toEqual(Array(6).fill('sum'));
    const retried = InlineEvaluationSpec.parse({ ...input, template: { ...input.template, retries: 2 } });
    expect(evaluationSlots('compare-claude', retried).filter((s) => before.get(`${s.cell.harness}/${s.cell.model}/${s.testCase}/${s.repeat}`) === s.name)).toEqual([]);
    const long = 'a'.repeat(40);
    const a = evaluationSlots(`${long}-one`, spec).map((s) => s.name);
    const b = evaluationSlots(`${long}-two`, spec).map((s) => s.name);
    expect(a.filter((n) => b.includes(n))).toEqual([]);
  });

  it('labels are valid label values; the model (with "/") is an annotation and its cell a hash', () => {
    const opus = slots.find((s) => s.cell.model === 'anthropic/claude-opus-4.1')!;
    expect(opus.labels).toEqual({ [EVALUATION_LABEL]: 'compare-claude', [CELL_LABEL]: cellKey(opus.cell), 'tcab.dev/harness': 'claude', [TEST_CASE_LABEL]: 'hello', [REPEAT_LABEL]: '1' });
    expect(opus.annotations).toEqual({ [MODEL_ANNOTATION]: 'anthropic/claude-opus-4.1' });
    for (const slot of slots) for (const value of Object.values(slot.labels)) expect(value).toMatch(LABEL_VALUE);
    expect(cellKey({ harness: 'claude', model: 'a' })).not.toBe(cellKey({ harness: 'claude', model: 'b' }));
  });

  test.prop([fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/)])('any Evaluation name gives DNS-label Run names and a valid label value', (name) => {
    for (const slot of evaluationSlots(name, InlineEvaluationSpec.parse({ ...input, repeats: 1 }))) expect(slot.name).toMatch(DNS_LABEL);
    expect(evaluationLabelValue(name)).toMatch(LABEL_VALUE);
    expect(evaluationLabelValue(name).length).toBeLessThanOrEqual(63);
  });
});

describe('EvaluationSpec', () => {
  it.each([
    [{ ...input, testCases: [input.testCases[0]!, { ...input.testCases[1]!, name: 'hello' }] }, 'testCases.1.name', '"hello" names two test cases'],
    [{ ...input, matrix: [{ harness: 'gg', models: ['stub', 'stub'] }] }, 'matrix.0.models.1', 'gg with stub is in the matrix twice'],
    [{ ...input, testCases: [{ name: 'Bad_Name', prompt: 'x' }] }, 'testCases.0.name', 'must be 1-40 lower case letters'],
    [{ ...input, repeats: 0 }, 'repeats', 'expected number to be >=1'],
    [{ ...input, template: { harness: 'claude' } }, 'template', 'harness'],
    [{ ...input, matrix: [{ harness: 'gg', models: Array.from({ length: 50 }, (_, i) => `m${i}`) }], testCases: Array.from({ length: 30 }, (_, i) => ({ name: `t${i}`, prompt: 'x' })), repeats: 100 }, 'repeats', 'the matrix makes 150000 Runs; at most 100000'],
  ])('rejects a bad spec naming the field (%#)', (bad, path, message) => {
    const parsed = EvaluationSpec.safeParse(bad);
    expect(parsed.success).toBe(false);
    // Exactly one issue names the field, and it says what is wrong there.
    const atPath = parsed.error!.issues.filter((i) => i.path.join('.') === path).map((i) => i.message);
    expect(atPath, JSON.stringify(parsed.error!.issues)).toEqual([expect.stringContaining(message)]);
  });
});
