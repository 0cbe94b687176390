// An Evaluation (issue 39): a harness x model x test-case matrix with repeats, as one object. Its spec is what the
// user asks for (Kubernetes-style camelCase, the `spec` of the Evaluation custom resource and the file `tcab eval`
// reads); its status is what the runs came to, per cell (one harness with one model). deploy/crds is generated from
// these schemas.
import { z } from 'zod';
import { RunSpec, TestCase } from '../run.ts';

/** A test case's name: it labels the test case's Runs and names them, so it is a DNS label. */
const TEST_CASE_NAME = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

export const MAX_EVALUATION_RUNS = 100_000;
/** Test cases of one Evaluation, inline and from ConfigMaps together. */
export const MAX_TEST_CASES = 10_000;

export const EvaluationTestCase = z
  .strictObject({
    name: z.string().regex(TEST_CASE_NAME, 'must be 1-40 lower case letters, digits and "-", starting and ending with a letter or digit').describe("The test case's name: it labels and names its Runs (1-40 lower case letters, digits and \"-\")"),
    prompt: RunSpec.shape.prompt,
    testCase: TestCase.optional(),
  })
  .describe('One task: its prompt, and the workspace and check of its Runs');
export type EvaluationTestCase = z.infer<typeof EvaluationTestCase>;

/** A ConfigMap's name: a DNS subdomain, as Kubernetes names objects. */
const CONFIG_MAP_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * A path with no NUL (it goes to the file system and to git) and no line break (it goes into an annotation and a
 * message). A refinement, not a pattern: the CRD keeps patterns, and the apiserver's regexps have no \u escape.
 */
const isPathText = (text: string) => !text.includes('\0') && !text.includes('\n') && !text.includes('\r');
/** A git ref's characters: none git refuses in a ref name (git check-ref-format), nor a space or control character. */
const isRefText = (ref: string) => [...ref].every((c) => c > ' ' && c !== '\u007f' && !'~^:?*[\\'.includes(c));

const ConfigMapSource = z
  .strictObject({
    configMap: z
      .strictObject({ name: z.string().regex(CONFIG_MAP_NAME, 'must be a ConfigMap name (a lower case DNS name: letters, digits, "-" and ".")').describe('The ConfigMap, in the namespace of the Evaluation') })
      .describe('A ConfigMap labelled tcab.dev/test-cases: each key ending .yaml, .yml or .json is a test case (its prompt and testCase), named by the key without the extension'),
  })
  .describe('Test cases from a ConfigMap (read by the dispatcher)');

const DirectorySource = z
  .strictObject({
    directory: z
      .string()
      .min(1)
      .max(4096)
      .refine(isPathText, 'must be a path (no NUL or line break)')
      .describe('A directory, relative to the evaluation file or absolute: each regular file in it ending .yaml, .yml or .json is a test case named by the file without the extension. Read by tcab (tcab eval run, tcab eval apply), never by the cluster'),
  })
  .describe('Test cases from a directory next to the evaluation file (read by tcab)');

/** A path inside a git repository: relative, and never out of it (no ".." segment). */
const REPO_PATH = z
  .string()
  .min(1)
  .max(4096)
  .refine(isPathText, 'must be a path (no NUL or line break)')
  .refine((path) => !path.startsWith('/'), 'must be relative to the root of the repository')
  .refine((path) => !path.split(/[\\/]/).includes('..'), 'must stay inside the repository (no ".." segment)');

const GitSource = z
  .strictObject({
    git: z
      .strictObject({
        url: z
          .string()
          .min(1)
          .max(2048)
          .refine(isPathText, 'must be a git URL (no NUL or line break)')
          .refine((url) => !url.startsWith('-'), 'must be a git URL, not an option (it starts with "-")')
          .refine((url) => !/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url), 'must be a git URL, not a remote helper ("<transport>::<address>")')
          .describe('What `git clone` takes: https://, ssh://, git://, file://, user@host:path, or a local path (relative to the evaluation file)'),
        ref: z
          .string()
          .min(1)
          .max(255)
          .refine(isRefText, 'must be a branch, tag or commit (no space, control character or ~^:?*[\\)')
          .refine((ref) => !ref.startsWith('-'), 'must be a branch, tag or commit, not an option (it starts with "-")')
          .optional()
          .describe('A branch, tag or commit (default: the remote HEAD); the commit it resolves to is recorded'),
        path: REPO_PATH.optional().describe('The directory of test cases inside the repository (default: its root)'),
      })
      .describe('A directory of a git repository, as a directory source'),
  })
  .describe('Test cases from a directory of a git repository (cloned by tcab)');

export const TestCasesFrom = z
  .union([ConfigMapSource, DirectorySource, GitSource], {
    // A union's own message says only "Invalid input": say which source was meant and what is wrong with it.
    error: (issue) => {
      if (issue.code !== 'invalid_union') return undefined;
      const input = issue.input;
      if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'must be an object with one of configMap, directory or git';
      const given = SOURCE_KINDS.filter((kind) => Object.hasOwn(input, kind));
      if (given.length !== 1) return given.length === 0 ? 'give one of configMap, directory or git' : `give one of configMap, directory or git, not ${given.join(' and ')}`;
      // The issues of the variant the key names, the first one (its path is inside the entry).
      const first = issue.errors[SOURCE_KINDS.indexOf(given[0]!)]?.[0];
      if (!first) return undefined;
      return first.path.length > 0 ? `${first.path.map(String).join('.')}: ${first.message}` : first.message;
    },
  })
  .describe('Where more test cases come from: exactly one of configMap, directory or git');
export type TestCasesFrom = z.infer<typeof TestCasesFrom>;
export type DirectorySource = z.infer<typeof DirectorySource>;
export type GitSource = z.infer<typeof GitSource>;
const SOURCE_KINDS = ['configMap', 'directory', 'git'] as const;

export const EvaluationHarness = z
  .strictObject({
    harness: RunSpec.shape.harness,
    models: z.array(RunSpec.shape.model).min(1).max(50).describe('The models this harness runs with (not every model fits every harness)'),
  })
  .describe('One harness and the models it is evaluated with: each pair is a cell of the matrix');

/** Every Run field an Evaluation's Runs share (the rest come from the matrix and the test cases). */
export const EvaluationTemplate = RunSpec.pick({ maxRuntimeSeconds: true, authMode: true, sessions: true, continuePrompt: true, budget: true, egress: true, retries: true })
  .partial()
  .describe("What every Run of the evaluation gets besides its harness, model, prompt and test case (the Run spec's defaults otherwise)");

export const EvaluationSpec = z
  .strictObject({
    matrix: z.array(EvaluationHarness).min(1).max(50).describe('The harnesses, each with the models it runs with'),
    testCases: z.array(EvaluationTestCase).min(1).max(MAX_TEST_CASES).optional().describe('The tasks every cell runs, each `repeats` times (with testCasesFrom: these first)'),
    testCasesFrom: z
      .array(TestCasesFrom)
      .min(1)
      .max(20)
      .optional()
      .describe('More test cases, each entry one of: a ConfigMap (in the namespace of the Evaluation, labelled tcab.dev/test-cases), a directory or a directory of a git repository (read by tcab: `tcab eval run`, or `tcab eval apply` which puts them in ConfigMaps). In each, every key or file ending .yaml, .yml or .json is one test case (the name without the extension is its name)'),
    repeats: z.int().min(1).max(100).default(1).describe('Runs of each test case in each cell: pass@k and pass^k need more than one'),
    template: EvaluationTemplate.optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.testCases === undefined && spec.testCasesFrom === undefined) ctx.addIssue({ code: 'custom', path: ['testCases'], message: 'give the test cases: testCases (inline), testCasesFrom (ConfigMaps, directories, git), or both' });
    const names = new Set<string>();
    spec.testCases?.forEach((t, i) => {
      if (names.has(t.name)) ctx.addIssue({ code: 'custom', path: ['testCases', i, 'name'], message: `"${t.name}" names two test cases` });
      names.add(t.name);
    });
    const configMaps = new Set<string>();
    spec.testCasesFrom?.forEach((source, i) => {
      if (!('configMap' in source)) return;
      const { name } = source.configMap;
      if (configMaps.has(name)) ctx.addIssue({ code: 'custom', path: ['testCasesFrom', i, 'configMap', 'name'], message: `ConfigMap "${name}" is named twice` });
      configMaps.add(name);
    });
    const cells = new Set<string>();
    spec.matrix.forEach((h, i) =>
      h.models.forEach((model, j) => {
        const cell = `${h.harness}\u0000${model}`;
        if (cells.has(cell)) ctx.addIssue({ code: 'custom', path: ['matrix', i, 'models', j], message: `${h.harness} with ${model} is in the matrix twice` });
        cells.add(cell);
      }),
    );
    // The inline test cases only: the sources' are counted when they are read (test-case-sources.ts).
    const runs = cells.size * (spec.testCases?.length ?? 0) * spec.repeats;
    if (runs > MAX_EVALUATION_RUNS) ctx.addIssue({ code: 'custom', path: ['repeats'], message: `the matrix makes ${runs} Runs; at most ${MAX_EVALUATION_RUNS}` });
  })
  .describe('What to evaluate: each harness with each of its models (a cell) on every test case, `repeats` times');
export type EvaluationSpec = z.infer<typeof EvaluationSpec>;
export type EvaluationSpecInput = z.input<typeof EvaluationSpec>;

/** A spec with every test case at hand: its inline ones and those of its sources (test-case-sources.ts), in order. */
export type ResolvedEvaluationSpec = Omit<EvaluationSpec, 'testCases' | 'testCasesFrom'> & { testCases: EvaluationTestCase[] };

/**
 * A spec whose test cases are all inline: what a results directory of `tcab eval run` stores (the test cases of a
 * directory or git already read into testCases). testCasesFrom is refused with the field named.
 */
export const InlineEvaluationSpec = EvaluationSpec.transform((spec, ctx): ResolvedEvaluationSpec => {
  const { testCases } = spec;
  if (spec.testCasesFrom !== undefined || testCases === undefined) {
    ctx.addIssue({ code: 'custom', path: ['testCasesFrom'], message: 'must be resolved first: a ConfigMap is read on a cluster (kubectl apply the Evaluation), a directory or git by tcab eval run; here, put the test cases inline in testCases' });
    return z.NEVER;
  }
  return { ...spec, testCases };
});

const Interval = z.strictObject({ low: z.number().min(0).max(1).describe('Lower bound'), high: z.number().min(0).max(1).describe('Upper bound') });
const AtK = z.strictObject({ k: z.int().min(1).describe('k: the repeats'), value: z.number().min(0).max(1).nullable().describe('null when no test case has k scored runs') });
const SumMean = z.strictObject({
  sum: z.number().nonnegative().nullable().describe('Over the scored runs; null when a run of them has no figure'),
  mean: z.number().nonnegative().nullable().describe('Per scored run; null when a run of them has no figure'),
});

export const EvaluationCell = z
  .strictObject({
    harness: z.string().describe('Harness slug'),
    model: z.string().describe('Model id, as given'),
    runs: z.int().nonnegative().describe('Runs of the cell (test cases x repeats)'),
    final: z.int().nonnegative().describe('Runs that ended'),
    scored: z.int().nonnegative().describe('Runs whose check ran (passed or failed): the denominator of the pass rate'),
    passed: z.int().nonnegative().describe('Scored runs whose check passed'),
    infrastructureFailed: z.int().nonnegative().describe('Runs that ended on infrastructure (or whose harness was unavailable): never counted as failed tasks'),
    unscored: z.int().nonnegative().describe('Other final runs without a verdict (cancelled, over budget, no check)'),
    passRate: z.number().min(0).max(1).nullable().describe('passed / scored; null before any run is scored'),
    passRateInterval: Interval.nullable().describe('Wilson 95% interval of the pass rate'),
    passAtK: AtK.optional().describe('Unbiased pass@k over test cases (k = repeats; only when repeats > 1)'),
    passHatK: AtK.optional().describe('pass^k: the chance all k runs of a test case pass, over test cases (only when repeats > 1)'),
    meanReward: z.number().min(0).max(1).nullable().describe('Mean of the rewards the checks wrote; null when none did'),
    tokens: z
      .partialRecord(z.enum(['input', 'output', 'cache_read', 'cache_write', 'reasoning']), z.strictObject({ sum: z.int().nonnegative().describe('Over the scored runs that report the class'), median: z.number().nonnegative().describe('Per run that reports the class') }))
      .describe('Tokens by class; a class no run reported is absent'),
    actualCostUsd: SumMean.describe('Actual cost in USD'),
    comparableCostUsd: SumMean.describe("Cost at the model catalogue's list prices in USD"),
    durationSeconds: z
      .strictObject({ p50: z.number().nonnegative().nullable().describe('Median'), p90: z.number().nonnegative().nullable().describe('90th percentile') })
      .describe('Wall time of the final runs that started, start to finish'),
  })
  .describe('One harness with one model over every test case');
export type EvaluationCell = z.infer<typeof EvaluationCell>;

export const EvaluationComparison = z
  .strictObject({
    fixed: z.enum(['model', 'harness']).describe('What the two cells share: the same model in two harnesses, or the same harness with two models'),
    a: z.strictObject({ harness: z.string().describe('Harness slug'), model: z.string().describe('Model id') }).describe('The cell with the higher pass rate'),
    b: z.strictObject({ harness: z.string().describe('Harness slug'), model: z.string().describe('Model id') }).describe('The other cell'),
    pValue: z.number().min(0).max(1).describe("Two-sided Fisher's exact test on passed/failed of the two cells' scored runs; below 0.05"),
  })
  .describe('Two cells differing by one factor whose pass rates differ significantly');

export const EvaluationStatus = z
  .strictObject({
    phase: z.enum(['Running', 'Completed', 'Invalid']).optional().describe('Completed once every Run is final; Invalid when the spec is refused (message says why) and no Run is made'),
    message: z.string().optional().describe('Why the spec is refused (Invalid), or what keeps a slot from its Run (a Run of that name the evaluation does not own)'),
    runs: z
      .strictObject({
        total: z.int().nonnegative().describe('Runs of the matrix'),
        final: z.int().nonnegative().describe('Runs that ended'),
        scored: z.int().nonnegative().describe('Final runs whose check ran, over every cell'),
        passed: z.int().nonnegative().describe('Scored runs whose check passed, over every cell'),
        byOutcome: z.record(z.string(), z.int().nonnegative()).describe('Final runs by outcome'),
      })
      .optional()
      .describe('Progress over the whole matrix'),
    cells: z.array(EvaluationCell).optional().describe('One entry per harness x model, in matrix order'),
    comparisons: z.array(EvaluationComparison).optional().describe("Every pair of cells sharing a model or a harness whose pass rates differ significantly (Fisher's exact test, p < 0.05), lowest p first"),
    observedGeneration: z.int().optional().describe('The metadata.generation this status was written for'),
  })
  .describe('What the Runs came to: written by the controller only');
export type EvaluationStatus = z.infer<typeof EvaluationStatus>;
