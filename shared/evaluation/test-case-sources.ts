// An Evaluation's test cases from where its spec says they are (issue 39): inline (spec.testCases), then each
// ConfigMap of spec.testCasesFrom, in the order given. In a ConfigMap, each key of `data` ending .yaml, .yml or .json
// is one test case: the key without the extension is its name (a DNS label, as inline), its value a YAML (or JSON)
// document of the test case without the name (prompt, testCase). Other keys are ignored; a ConfigMap's test cases
// are in the order of their keys. Pure: the caller looks the ConfigMaps up (the dispatcher: its cache of the
// ConfigMaps labelled tcab.dev/test-cases). Every problem names the field and the key, the first one found.
import { parse as parseYaml } from 'yaml';
import { GROUP } from '../api-group.ts';
import { formatIssues } from '../zod-issues.ts';
import { EvaluationTestCase, MAX_EVALUATION_RUNS, MAX_TEST_CASES } from './schema.ts';
import type { EvaluationSpec, ResolvedEvaluationSpec } from './schema.ts';

/** The label a ConfigMap of test cases carries (any value): the dispatcher caches only these. */
export const TEST_CASES_LABEL = `${GROUP}/test-cases`;

/** A key naming a test case, and its name. */
const TEST_CASE_KEY = /^(.*)\.(yaml|yml|json)$/;

/** A ConfigMap's test cases, without their names (the key gives it). */
const TestCaseDocument = EvaluationTestCase.omit({ name: true });
const TestCaseName = EvaluationTestCase.shape.name;

/** A ConfigMap by name, in the Evaluation's namespace, as far as it matters here; undefined when there is none. */
export type ConfigMapLookup = (name: string) => { data?: Record<string, string> } | undefined;

export type ResolvedTestCases = { testCases: EvaluationTestCase[] } | { problem: string };

/** A key as a problem quotes it: escaped, and cut (a hostile key must not make a huge message). */
const quote = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

/** The first line of a YAML error, cut. */
const firstLine = (error: unknown) => {
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
};

/** Every test case of the spec, inline first, then each ConfigMap's keys sorted; or the first problem. */
export function resolveTestCases(spec: EvaluationSpec, lookup: ConfigMapLookup): ResolvedTestCases {
  const testCases: EvaluationTestCase[] = [];
  /** Where each name was first given, as a problem says it. */
  const origin = new Map<string, string>();
  spec.testCases?.forEach((testCase, i) => {
    testCases.push(testCase);
    if (!origin.has(testCase.name)) origin.set(testCase.name, `spec.testCases[${i}]`);
  });
  for (const [i, { configMap }] of (spec.testCasesFrom ?? []).entries()) {
    const field = `spec.testCasesFrom[${i}].configMap ${JSON.stringify(configMap.name)}`;
    const found = lookup(configMap.name);
    if (!found) return { problem: `${field}: not found (or not labelled ${TEST_CASES_LABEL})` };
    const data = found.data ?? {};
    const keys = Object.keys(data).filter((key) => TEST_CASE_KEY.test(key)).sort();
    if (keys.length === 0) return { problem: `${field}: no key ending .yaml, .yml or .json (each such key is a test case)` };
    for (const key of keys) {
      const where = `${field} key ${quote(key)}`;
      const name = TEST_CASE_KEY.exec(key)![1]!;
      const named = TestCaseName.safeParse(name);
      if (!named.success) return { problem: `${where}: the name ${quote(name)} (the key without its extension) ${named.error.issues[0]!.message}` };
      const previous = origin.get(name);
      if (previous) return { problem: `${where}: test case "${name}" is also ${previous}` };
      origin.set(name, where);
      const value: unknown = data[key];
      if (typeof value !== 'string') return { problem: `${where}: not text` };
      let document: unknown;
      try {
        // logLevel error: errors throw, warnings are not printed. An alias bomb is refused.
        document = parseYaml(value, { maxAliasCount: 100, logLevel: 'error' });
      } catch (error) {
        return { problem: `${where}: not YAML or JSON: ${firstLine(error)}` };
      }
      const parsed = TestCaseDocument.safeParse(document);
      if (!parsed.success) return { problem: `${where}: ${formatIssues(parsed.error, '', { maxIssues: 3 })}` };
      testCases.push({ name, ...parsed.data });
    }
    if (testCases.length > MAX_TEST_CASES) return { problem: `${field}: ${testCases.length} test cases with those before it; at most ${MAX_TEST_CASES}` };
  }
  const cells = spec.matrix.reduce((n, h) => n + h.models.length, 0);
  const runs = cells * testCases.length * spec.repeats;
  if (runs > MAX_EVALUATION_RUNS) return { problem: `spec.testCasesFrom: the matrix makes ${runs} Runs with the ConfigMaps' test cases; at most ${MAX_EVALUATION_RUNS}` };
  return { testCases };
}

/** The spec with every test case at hand, or the first problem. */
export function resolveEvaluationSpec(spec: EvaluationSpec, lookup: ConfigMapLookup): { spec: ResolvedEvaluationSpec } | { problem: string } {
  const resolved = resolveTestCases(spec, lookup);
  if ('problem' in resolved) return resolved;
  const { testCasesFrom: _, ...rest } = spec;
  return { spec: { ...rest, testCases: resolved.testCases } };
}

/** The ConfigMaps a stored spec (not parsed: any JSON) names, for the controller's index and memo; never throws. */
export function configMapNamesOf(spec: unknown): string[] {
  const from = (spec as { testCasesFrom?: unknown } | null | undefined)?.testCasesFrom;
  if (!Array.isArray(from)) return [];
  return from.flatMap((entry: unknown) => {
    const name = (entry as { configMap?: { name?: unknown } } | null)?.configMap?.name;
    return typeof name === 'string' ? [name] : [];
  });
}
