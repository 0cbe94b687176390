// What `tcab eval apply FILE` writes, without a cluster: each directory or git source becomes a ConfigMap
// <evaluation>-cases-<index> (labelled for the dispatcher, annotated with its source, owned by the Evaluation) and
// the spec names it instead; inline and configMap sources pass through. What the dispatcher then makes of it is what
// `tcab eval run` makes of the file: the same slots.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../shared/errors.ts';
import { EvaluationSpec } from '../../../shared/evaluation/schema.ts';
import { evaluationSlots } from '../../../shared/evaluation/slots.ts';
import { slotsOf } from '../../../dispatcher/evaluations/plan.ts';
import { MAX_CONFIG_MAP_BYTES, casesConfigMapName, dataBytes, planApply } from './apply.ts';
import { parseEvaluationFile, readEvaluationDocument, readEvaluationFile, readSourcesOf, resolveEvaluationFile } from './document.ts';
import { readTestCaseDirectory } from './sources.ts';
import type { ReadSource } from './sources.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-eval-apply-'));
  mkdirSync(join(dir, 'cases'));
  writeFileSync(join(dir, 'cases', 'hello.yaml'), 'prompt: Create hello.txt\ntestCase: { check: { command: "test -f hello.txt" } }\n');
  writeFileSync(join(dir, 'cases', 'bye.json'), '{"prompt": "Create bye.txt"}');
  writeFileSync(join(dir, 'cases', 'README.md'), 'not a test case');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILE = `apiVersion: tcab.dev/v1alpha1
kind: Evaluation
metadata: { name: nightly, labels: { team: evals }, annotations: { note: kept } }
spec:
  matrix: [{ harness: gg, models: [stub] }]
  testCases: [{ name: inline, prompt: x }]
  testCasesFrom:
    - configMap: { name: shared-cases }
    - directory: cases
    - git: { url: "https://example.com/evals.git", ref: main, path: suite }
  repeats: 2
`;
const GIT: ReadSource = { files: { 'git-one.yml': 'prompt: from git\n' }, provenance: { index: 2, git: { url: 'https://example.com/evals.git', ref: 'main', path: 'suite', commit: 'a'.repeat(40) } } };

/** The file read as apply reads it: the directory for real, the git source as a clone would give it. */
function planOf(text = FILE, git: ReadSource = GIT) {
  const evaluation = parseEvaluationFile(text, join(dir, 'e.yaml'));
  const read = new Map<number, ReadSource>();
  evaluation.spec.testCasesFrom?.forEach((source, i) => {
    if ('directory' in source) read.set(i, { files: readTestCaseDirectory(join(dir, source.directory), 'directory'), provenance: { index: i, directory: join(dir, source.directory) } });
    if ('git' in source) read.set(i, git);
  });
  return { plan: planApply(evaluation, read, 'evals'), read };
}

const refusal = (make: () => unknown) => {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('planApply', () => {
  it('the Evaluation: each directory and git source now its ConfigMap, the rest as written, the metadata kept', () => {
    const { plan } = planOf();
    expect(plan.evaluation).toEqual({
      apiVersion: 'tcab.dev/v1alpha1',
      kind: 'Evaluation',
      metadata: { name: 'nightly', namespace: 'evals', labels: { team: 'evals' }, annotations: { note: 'kept' } },
      spec: {
        matrix: [{ harness: 'gg', models: ['stub'] }],
        testCases: [{ name: 'inline', prompt: 'x' }],
        testCasesFrom: [{ configMap: { name: 'shared-cases' } }, { configMap: { name: expect.stringMatching(/^nightly-cases-1-[0-9a-f]{10}$/) } }, { configMap: { name: expect.stringMatching(/^nightly-cases-2-[0-9a-f]{10}$/) } }],
        repeats: 2,
      },
    });
    expect(EvaluationSpec.safeParse(plan.evaluation.spec).success).toBe(true);
    expect(plan.configMapNames).toEqual([expect.stringMatching(/^nightly-cases-1-[0-9a-f]{10}$/), expect.stringMatching(/^nightly-cases-2-[0-9a-f]{10}$/)]);
    expect(plan.evaluation.spec.testCasesFrom!.slice(1)).toEqual(plan.configMapNames.map((name) => ({ configMap: { name } })));
  });

  it('the ConfigMaps: the test case files only, labelled for the dispatcher, annotated with the source (and commit), owned by the Evaluation', () => {
    const [fromDir, fromGit] = planOf().plan.configMaps({ name: 'nightly', uid: 'uid-1' });
    const owner = [{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Evaluation', name: 'nightly', uid: 'uid-1' }];
    const labels = { 'tcab.dev/test-cases': 'true', 'tcab.dev/evaluation': 'nightly' };
    expect(fromDir).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: casesConfigMapName('nightly', 1, fromDir!.data!), namespace: 'evals', labels, annotations: { 'tcab.dev/test-cases-directory': join(dir, 'cases') }, ownerReferences: owner },
      data: { 'bye.json': '{"prompt": "Create bye.txt"}', 'hello.yaml': 'prompt: Create hello.txt\ntestCase: { check: { command: "test -f hello.txt" } }\n' },
    });
    expect(fromGit).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: casesConfigMapName('nightly', 2, fromGit!.data!),
        namespace: 'evals',
        labels,
        annotations: { 'tcab.dev/test-cases-git-url': 'https://example.com/evals.git', 'tcab.dev/test-cases-git-ref': 'main', 'tcab.dev/test-cases-git-commit': 'a'.repeat(40), 'tcab.dev/test-cases-git-path': 'suite' },
        ownerReferences: owner,
      },
      data: { 'git-one.yml': 'prompt: from git\n' },
    });
    // Before the Evaluation exists (no uid yet): the same ConfigMaps without an owner, adopted once it is created.
    expect(planOf().plan.configMaps().map((c) => c.metadata)).toEqual([fromDir!.metadata!, fromGit!.metadata!].map(({ ownerReferences: _, ...rest }) => rest));
  });

  it('names each ConfigMap by its content: an edited file is a new ConfigMap, the same files the same name', () => {
    const files = { 'a.yaml': 'prompt: a\n', 'b.yaml': 'prompt: b\n' };
    const name = casesConfigMapName('nightly', 1, files);
    expect(name).toMatch(/^nightly-cases-1-[0-9a-f]{10}$/);
    expect(casesConfigMapName('nightly', 1, { 'b.yaml': 'prompt: b\n', 'a.yaml': 'prompt: a\n' })).toBe(name); // key order is not content
    expect(casesConfigMapName('nightly', 1, { ...files, 'a.yaml': 'prompt: a, edited\n' })).not.toBe(name);
    expect(casesConfigMapName('nightly', 1, { 'a.yaml': 'prompt: a\n' })).not.toBe(name);
    expect(casesConfigMapName('nightly', 1, { 'a.yaml': 'prompt: a\n\u0000b.yaml\u0000prompt: b\n' })).not.toBe(name); // no two files read as one
    expect(casesConfigMapName('nightly', 2, files)).toMatch(/^nightly-cases-2-/);
  });

  it('what the dispatcher makes of the applied objects is what tcab eval run makes of the file: the same slots', () => {
    const { plan, read } = planOf();
    const configMaps = new Map(plan.configMaps({ name: 'nightly', uid: 'u' }).map((c) => [c.metadata!.name!, c.data!]));
    configMaps.set('shared-cases', { 'shared.yaml': 'prompt: shared\n' });
    const onCluster = slotsOf({ ...plan.evaluation, metadata: { ...plan.evaluation.metadata, uid: 'u' } }, (name) => (configMaps.has(name) ? { data: configMaps.get(name)! } : undefined));
    if (!onCluster.valid) throw new Error(onCluster.message);
    // Here: the configMap source inline instead (a workstation has no ConfigMap), the rest read as tcab eval run reads them.
    const here = resolveEvaluationFile(parseEvaluationFile(FILE.replace('- configMap: { name: shared-cases }', '- directory: shared'), join(dir, 'e.yaml')), () => new Map([[0, { files: { 'shared.yaml': 'prompt: shared\n' }, provenance: { index: 0, directory: 'shared' } }], [1, read.get(1)!], [2, read.get(2)!]]));
    expect(onCluster.slots).toEqual(evaluationSlots('nightly', here.spec));
    expect(onCluster.slots.map((s) => s.testCase)).toEqual(['inline', 'inline', 'shared', 'shared', 'bye', 'bye', 'hello', 'hello', 'git-one', 'git-one']);
  });

  it('an Evaluation without directory or git sources passes through as written, with no ConfigMap', () => {
    const { plan } = planOf(FILE.replace(/ {2}testCasesFrom:\n(.*\n){3}/, ''));
    expect(plan.evaluation.spec).toEqual({ matrix: [{ harness: 'gg', models: ['stub'] }], testCases: [{ name: 'inline', prompt: 'x' }], repeats: 2 });
    expect(plan.configMaps({ name: 'nightly', uid: 'u' })).toEqual([]);
  });

  it('refuses test cases that would not fit in a ConfigMap (1 MiB), naming the source', () => {
    const big = 'prompt: ' + 'x'.repeat(600 * 1024) + '\n';
    const files = { 'a.yaml': big, 'b.yaml': big };
    expect(dataBytes(files)).toBeGreaterThan(MAX_CONFIG_MAP_BYTES);
    expect(refusal(() => planOf(FILE, { ...GIT, files }))).toBe(`${join(dir, 'e.yaml')}: spec.testCasesFrom[2].git "https://example.com/evals.git" path "suite": its test cases are ${dataBytes(files)} bytes, more than a ConfigMap holds (1048576 bytes, 1 MiB): split them into several directories (testCasesFrom takes up to 20)`);
    // Just under the limit is fine.
    // (A prompt holds at most 1,000,000 characters: the rest is a YAML comment.)
    const fits = { 'a.yaml': `prompt: x\n#${'x'.repeat(MAX_CONFIG_MAP_BYTES - 'a.yaml'.length - 'prompt: x\n#\n'.length)}\n` };
    expect(dataBytes(fits)).toBe(MAX_CONFIG_MAP_BYTES);
    expect(planOf(FILE, { ...GIT, files: fits }).plan.configMapNames).toHaveLength(2);
  });

  it.each<[string, string, ReadSource, RegExp]>([
    ['a bad test case file (nothing is written)', FILE, { ...GIT, files: { 'bad.yaml': 'prompt: [' } }, /e\.yaml: spec\.testCasesFrom\[2\]\.git "https:\/\/example\.com\/evals\.git" path "suite" file "bad\.yaml": not YAML or JSON: /],
    ['a name given twice', FILE, { ...GIT, files: { 'hello.yaml': 'prompt: again' } }, /file "hello\.yaml": test case "hello" is also spec\.testCasesFrom\[1\]\.directory "cases" file "hello\.yaml"$/],
    ['a ConfigMap named as apply names one', FILE.replace('name: shared-cases', `name: ${casesConfigMapName('nightly', 2, GIT.files)}`), GIT, /e\.yaml: spec\.testCasesFrom\[2\]\.configMap\.name: ConfigMap "nightly-cases-2-[0-9a-f]{10}" is named twice \(once each directory and git source is its ConfigMap <evaluation>-cases-<index>-<hash>\)$/],
    ['a name too long for its ConfigMaps', FILE.replace('name: nightly', `name: ${'n'.repeat(240)}`), GIT, /spec\.testCasesFrom\[1\]\.directory "cases": its ConfigMap would be named 259 characters long \(<evaluation>-cases-1-<hash>\); at most 253: shorten metadata\.name$/],
  ])('refuses %s, naming the file and the field', (_, text, git, message) => {
    expect(refusal(() => planOf(text, git))).toMatch(message);
  });

  it('a bare spec is named after its file and its fields without "spec."', () => {
    const bare = 'matrix: [{ harness: gg, models: [stub] }]\ntestCasesFrom: [{ directory: cases }]\n';
    const evaluation = parseEvaluationFile(bare, join(dir, 'My Eval.yaml'));
    const plan = planApply(evaluation, readSourcesOf(evaluation), 'default');
    expect(plan.evaluation.metadata).toEqual({ name: 'my-eval', namespace: 'default' });
    expect(plan.evaluation.spec.testCasesFrom).toEqual([{ configMap: { name: expect.stringMatching(/^my-eval-cases-0-[0-9a-f]{10}$/) } }]);
    expect(refusal(() => planApply(evaluation, new Map([[0, { files: { 'x.yaml': '' }, provenance: { index: 0, directory: 'cases' } }]]), 'default'))).toMatch(/My Eval\.yaml: testCasesFrom\[0\]\.directory "cases" file "x\.yaml": \(root\): /);
  });
});

describe('deploy/examples/evaluation-directory.yaml', () => {
  const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'deploy', 'examples', 'evaluation-directory.yaml');

  it('runs here with its two test cases from the directory next to it, and applies as one ConfigMap of them', () => {
    const doc = readEvaluationDocument(EXAMPLE);
    expect(doc.spec.testCases.map((t) => [t.name, t.testCase?.check?.command !== undefined])).toEqual([['goodbye', true], ['hello', true]]);
    expect(evaluationSlots(doc.name, doc.spec)).toHaveLength(4);
    const evaluation = readEvaluationFile(EXAMPLE);
    const plan = planApply(evaluation, readSourcesOf(evaluation), 'tcab');
    expect(plan.evaluation.spec.testCasesFrom).toEqual([{ configMap: { name: expect.stringMatching(/^stub-directory-cases-0-[0-9a-f]{10}$/) } }]);
    expect(Object.keys(plan.configMaps({ name: 'stub-directory', uid: 'u' })[0]!.data!)).toEqual(['goodbye.json', 'hello.yaml']);
  });
});
