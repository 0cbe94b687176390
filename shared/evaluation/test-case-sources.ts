// An Evaluation's test cases from where its spec says they are (issue 39): inline (spec.testCases), then each
// source of spec.testCasesFrom, in the order given: a ConfigMap, a directory, or a directory of a git repository. In
// each, every key (file) ending .yaml, .yml or .json is one test case: the key without the extension is its name (a
// DNS label, as inline), its value a YAML (or JSON) document of the test case without the name (prompt, testCase).
// Other keys are ignored; a source's test cases are in the order of their keys. One implementation (testCasesOfFiles)
// reads a ConfigMap's data and a directory's files, so the two cannot drift. Pure: the caller looks the ConfigMaps up
// (the dispatcher: its cache of the ConfigMaps labelled tcab.dev/test-cases) and reads directories and git (tcab,
// on the client: the dispatcher never reads either, and says so). Every problem names the field and the key, the
// first one found.
import { parse as parseYaml } from 'yaml';
import { GROUP } from '../api-group.ts';
import { formatIssues } from '../zod-issues.ts';
import { EvaluationTestCase, MAX_EVALUATION_RUNS, MAX_TEST_CASES } from './schema.ts';
import type { EvaluationSpec, ResolvedEvaluationSpec, TestCasesFrom } from './schema.ts';

/** The label a ConfigMap of test cases carries (any value): the dispatcher caches only these. */
export const TEST_CASES_LABEL = `${GROUP}/test-cases`;

/** A key (file name) naming a test case, and its name. */
export const TEST_CASE_KEY = /^(.*)\.(yaml|yml|json)$/;

/** A test case of a ConfigMap or a directory, without its name (the key gives it). */
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

/**
 * The test cases of directory and git sources, already read where the evaluation file is (tcab), by their index in
 * spec.testCasesFrom: each a map of file name to its text, as a ConfigMap's data.
 */
export type LocalSources = ReadonlyMap<number, Readonly<Record<string, string>>>;

/** How a problem names a source: its field in the spec and what it says. */
export function sourceField(source: TestCasesFrom, i: number): string {
  if ('configMap' in source) return `spec.testCasesFrom[${i}].configMap ${quote(source.configMap.name)}`;
  if ('directory' in source) return `spec.testCasesFrom[${i}].directory ${quote(source.directory)}`;
  return `spec.testCasesFrom[${i}].git ${quote(source.git.url)}${source.git.path ? ` path ${quote(source.git.path)}` : ''}`;
}

/**
 * The test cases of one source's keys (a ConfigMap's data, a directory's files): each key ending .yaml, .yml or
 * .json, sorted. `origin` holds where each name was given before (and gets these); `word` is how a problem names a
 * key ("key" of a ConfigMap, "file" of a directory).
 */
export function testCasesOfFiles(data: Readonly<Record<string, unknown>>, field: string, origin: Map<string, string>, word: 'key' | 'file'): { testCases: EvaluationTestCase[] } | { problem: string } {
  const testCases: EvaluationTestCase[] = [];
  const keys = Object.keys(data).filter((key) => TEST_CASE_KEY.test(key)).sort();
  if (keys.length === 0) return { problem: `${field}: no ${word} ending .yaml, .yml or .json (each such ${word} is a test case)` };
  if (keys.length > MAX_TEST_CASES) return { problem: `${field}: ${keys.length} test cases; at most ${MAX_TEST_CASES}` };
  for (const key of keys) {
    const where = `${field} ${word} ${quote(key)}`;
    const name = TEST_CASE_KEY.exec(key)![1]!;
    const named = TestCaseName.safeParse(name);
    if (!named.success) return { problem: `${where}: the name ${quote(name)} (the ${word} without its extension) ${named.error.issues[0]!.message}` };
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
  return { testCases };
}

/**
 * Every test case of the spec, inline first, then each source's keys sorted; or the first problem. A directory or
 * git source is read from `local` (tcab reads them); without it (the dispatcher) it is refused, naming the field.
 */
export function resolveTestCases(spec: EvaluationSpec, lookup: ConfigMapLookup, local: LocalSources = new Map()): ResolvedTestCases {
  const testCases: EvaluationTestCase[] = [];
  /** Where each name was first given, as a problem says it. */
  const origin = new Map<string, string>();
  spec.testCases?.forEach((testCase, i) => {
    testCases.push(testCase);
    if (!origin.has(testCase.name)) origin.set(testCase.name, `spec.testCases[${i}]`);
  });
  for (const [i, source] of (spec.testCasesFrom ?? []).entries()) {
    const field = sourceField(source, i);
    let read: ReturnType<typeof testCasesOfFiles>;
    if ('configMap' in source) {
      const found = lookup(source.configMap.name);
      if (!found) return { problem: `${field}: not found (or not labelled ${TEST_CASES_LABEL})` };
      read = testCasesOfFiles(found.data ?? {}, field, origin, 'key');
    } else {
      const files = local.get(i);
      if (!files) {
        const kind = 'directory' in source ? 'a directory' : 'a git repository';
        return { problem: `${field}: ${kind} is read by tcab where the evaluation file is, never by the cluster: apply the file with \`tcab eval apply FILE\` (it puts the test cases in a ConfigMap), not kubectl` };
      }
      read = testCasesOfFiles(files, field, origin, 'file');
    }
    if ('problem' in read) return read;
    testCases.push(...read.testCases);
    if (testCases.length > MAX_TEST_CASES) return { problem: `${field}: ${testCases.length} test cases with those before it; at most ${MAX_TEST_CASES}` };
  }
  const cells = spec.matrix.reduce((n, h) => n + h.models.length, 0);
  const runs = cells * testCases.length * spec.repeats;
  if (runs > MAX_EVALUATION_RUNS) return { problem: `spec.testCasesFrom: the matrix makes ${runs} Runs with the test cases of testCasesFrom; at most ${MAX_EVALUATION_RUNS}` };
  return { testCases };
}

/** The spec with every test case at hand, or the first problem. */
export function resolveEvaluationSpec(spec: EvaluationSpec, lookup: ConfigMapLookup, local?: LocalSources): { spec: ResolvedEvaluationSpec } | { problem: string } {
  const resolved = resolveTestCases(spec, lookup, local);
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
