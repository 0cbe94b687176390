// `tcab eval apply FILE` against the test cluster's apiserver (and its garbage collector): a directory and a git
// repository (made here, cloned by file:// path) become ConfigMaps <name>-cases-<index>-<hash of their content>,
// written before the Evaluation and then owned by it, labelled for the dispatcher and annotated with their source and
// commit; applied again, the Evaluation keeps its uid, an edited directory is a new ConfigMap (named before the
// Evaluation names it) and the ConfigMaps no longer named are deleted; deleting the Evaluation deletes them. A
// ConfigMap of that name it does not own is never touched; a cluster it cannot reach is exit 3.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, kubectl, waitFor } from '../../../test/cluster/support.ts';
import { REFUSING_PORT } from '../../../test/support/nats-server.ts';
import type { EvaluationObject } from '../../../kube/resources.ts';
import { casesConfigMapName } from './apply.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let ns: string;
let removeNs: () => Promise<void>;
let dir: string;
let commit: string;

function tcab(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 120_000 }, (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

const getJson = async <T,>(args: string[]): Promise<T> => {
  const got = await kubectl(['get', ...args, '-n', ns, '-o', 'json']);
  expect(got.code, got.stderr).toBe(0);
  return JSON.parse(got.stdout) as T;
};

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('tcab-eval-apply'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/evaluations.tcab.dev', '--timeout=30s']);
  dir = mkdtempSync(join(tmpdir(), 'tcab-eval-apply-cluster-'));
  mkdirSync(join(dir, 'cases'));
  writeFileSync(join(dir, 'cases', 'hello.yaml'), 'prompt: Create hello.txt\ntestCase: { check: { command: "test -f hello.txt" } }\n');
  writeFileSync(join(dir, 'cases', 'README.md'), 'not a test case');
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'suite'), { recursive: true });
  writeFileSync(join(repo, 'suite', 'bye.json'), '{"prompt": "Create bye.txt"}');
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' }).trim();
  git('init', '--quiet', '--initial-branch=main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'suite');
  commit = git('rev-parse', 'HEAD');
});

afterAll(async () => {
  await removeNs?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const evaluationFile = (sources: string) => `apiVersion: tcab.dev/v1alpha1
kind: Evaluation
metadata: { name: applied }
spec:
  matrix: [{ harness: gg, models: [stub] }]
  testCasesFrom:
${sources}
`;

describe('tcab eval apply', () => {
  it('writes a ConfigMap per directory or git source (named by its content), then the Evaluation that owns them; again: the same uid, unchanged, an edit a new ConfigMap, the old pruned; deleted with it', async () => {
    const file = join(dir, 'applied.yaml');
    writeFileSync(file, evaluationFile(`    - directory: cases\n    - git: { url: "file://${join(dir, 'repo')}", ref: main, path: suite }`));
    const first = await tcab(['eval', 'apply', file, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const helloFile = { 'hello.yaml': 'prompt: Create hello.txt\ntestCase: { check: { command: "test -f hello.txt" } }\n' };
    const dirCases = casesConfigMapName('applied', 0, helloFile);
    const gitCases = casesConfigMapName('applied', 1, { 'bye.json': '{"prompt": "Create bye.txt"}' });
    // The ConfigMaps before the Evaluation that names them.
    expect(first.stdout).toContain(`configmap/${dirCases} created (1 test case(s))\nconfigmap/${gitCases} created (1 test case(s))\nevaluation.tcab.dev/applied created\n`);

    const evaluation = await getJson<EvaluationObject>(['evaluation', 'applied']);
    expect(evaluation.spec.testCasesFrom).toEqual([{ configMap: { name: dirCases } }, { configMap: { name: gitCases } }]);
    const uid = evaluation.metadata!.uid!;
    const fromDir = await getJson<V1ConfigMap>(['configmap', dirCases]);
    expect(fromDir.metadata!.labels).toMatchObject({ 'tcab.dev/test-cases': 'true', 'tcab.dev/evaluation': 'applied' });
    expect(fromDir.metadata!.annotations).toMatchObject({ 'tcab.dev/test-cases-directory': join(dir, 'cases') });
    expect(fromDir.metadata!.ownerReferences).toEqual([{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Evaluation', name: 'applied', uid }]);
    expect(fromDir.data).toEqual(helloFile);
    const fromGit = await getJson<V1ConfigMap>(['configmap', gitCases]);
    expect(fromGit.metadata!.annotations).toMatchObject({ 'tcab.dev/test-cases-git-url': `file://${join(dir, 'repo')}`, 'tcab.dev/test-cases-git-ref': 'main', 'tcab.dev/test-cases-git-commit': commit, 'tcab.dev/test-cases-git-path': 'suite' });
    expect(fromGit.metadata!.ownerReferences).toEqual([{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Evaluation', name: 'applied', uid }]);
    expect(fromGit.data).toEqual({ 'bye.json': '{"prompt": "Create bye.txt"}' });

    // The same file again: nothing changes.
    const same = await tcab(['eval', 'apply', file, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toContain(`configmap/${dirCases} unchanged (1 test case(s))\nconfigmap/${gitCases} unchanged (1 test case(s))\nevaluation.tcab.dev/applied configured\n`);

    // Again, the directory edited and the git source gone: a new ConfigMap of the edited directory (owned from the
    // start), then the Evaluation replaced (its uid kept) naming it, then both old ConfigMaps deleted.
    writeFileSync(join(dir, 'cases', 'hello.yaml'), 'prompt: Create hello.txt, edited\n');
    writeFileSync(file, evaluationFile('    - directory: cases'));
    const edited = casesConfigMapName('applied', 0, { 'hello.yaml': 'prompt: Create hello.txt, edited\n' });
    const again = await tcab(['eval', 'apply', file, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`configmap/${edited} created (1 test case(s))\nevaluation.tcab.dev/applied configured\n`);
    expect(again.stdout).toContain(`configmap/${dirCases} deleted (no longer named by the spec)\n`);
    expect(again.stdout).toContain(`configmap/${gitCases} deleted (no longer named by the spec)\n`);
    const replaced = await getJson<EvaluationObject>(['evaluation', 'applied']);
    expect(replaced.metadata!.uid).toBe(uid);
    expect(replaced.spec.testCasesFrom).toEqual([{ configMap: { name: edited } }]);
    expect((await getJson<V1ConfigMap>(['configmap', edited])).data).toEqual({ 'hello.yaml': 'prompt: Create hello.txt, edited\n' });
    for (const gone of [dirCases, gitCases]) expect((await kubectl(['get', 'configmap', gone, '-n', ns])).code).not.toBe(0);

    // Deleting the Evaluation deletes its ConfigMaps (the garbage collector, through their owner reference).
    expect((await kubectl(['delete', 'evaluation', 'applied', '-n', ns, '--wait'])).code).toBe(0);
    await waitFor<KubernetesObject>(`/api/v1/namespaces/${ns}/configmaps`, (items) => items.length === 0, 60_000, { labelSelector: 'tcab.dev/evaluation=applied' });
  });

  it('never touches a ConfigMap of that name it does not own: exit 2, naming it', async () => {
    // Named as apply would name this directory's ConfigMap, but another Evaluation's (an owner that is not this one).
    const theirs = casesConfigMapName('theirs', 0, { 'hello.yaml': 'prompt: Create hello.txt, edited\n' });
    const other = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: theirs, labels: { 'tcab.dev/evaluation': 'someone-else' } }, data: { 'keep.yaml': 'prompt: mine' } };
    expect((await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(other))).code).toBe(0);
    const file = join(dir, 'theirs.yaml');
    writeFileSync(file, evaluationFile('    - directory: cases').replace('name: applied', 'name: theirs'));
    const refused = await tcab(['eval', 'apply', file, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`ConfigMap ${ns}/${theirs} exists and is not this Evaluation's`);
    expect((await getJson<V1ConfigMap>(['configmap', theirs])).data).toEqual({ 'keep.yaml': 'prompt: mine' });
    expect((await kubectl(['get', 'evaluation', 'theirs', '-n', ns])).code).not.toBe(0); // refused before the Evaluation
  });

  it('refuses a bad test case before writing anything (exit 2), and a cluster it cannot reach is exit 3', async () => {
    mkdirSync(join(dir, 'bad'));
    writeFileSync(join(dir, 'bad', 'broken.yaml'), 'prompt: [');
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, evaluationFile('    - directory: bad').replace('name: applied', 'name: bad'));
    const refused = await tcab(['eval', 'apply', file, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${file}: spec.testCasesFrom[0].directory "bad" file "broken.yaml": not YAML or JSON`);
    expect((await kubectl(['get', 'evaluation', 'bad', '-n', ns])).code).not.toBe(0);

    const deadConfig = join(dir, 'dead.kubeconfig');
    writeFileSync(deadConfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'dead', cluster: { server: `https://127.0.0.1:${REFUSING_PORT}`, 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: { token: 'fake-kube-token-for-tests' } }], contexts: [{ name: 'dead', context: { cluster: 'dead', user: 'u' } }], 'current-context': 'dead' }));
    const unreachable = await tcab(['eval', 'apply', join(dir, 'applied.yaml'), '-n', ns, '--kubeconfig', deadConfig]);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain(`cannot read Evaluation ${ns}/applied (context dead)`);
    expect(unreachable.stderr).not.toContain('fake-kube-token-for-tests');
  });
});
