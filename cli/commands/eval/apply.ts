// What `tcab eval apply FILE` writes to a cluster, decided here without one: the Evaluation, each directory or git
// source of its spec.testCasesFrom rewritten to a ConfigMap `<evaluation>-cases-<index>-<hash>`, and those ConfigMaps (the
// source's test case files as keys, labelled tcab.dev/test-cases so the dispatcher reads them, annotated with where
// they came from, owned by the Evaluation so deleting it deletes them). Inline and configMap sources pass through.
// The dispatcher never reads a directory or clones a repository: tcab does, here, where the file is.
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1OwnerReference } from '@kubernetes/client-node';
import { InvalidInputError } from '../../../shared/errors.ts';
import { formatIssues } from '../../../shared/zod-issues.ts';
import { GROUP, VERSION } from '../../../kube/resources.ts';
import type { EvaluationObject } from '../../../kube/resources.ts';
import { EVALUATION_KIND } from '../../../kube/evaluation-owner.ts';
import { EvaluationSpec } from '../../../shared/evaluation/schema.ts';
import type { EvaluationSpecInput } from '../../../shared/evaluation/schema.ts';
import { EVALUATION_LABEL, evaluationLabelValue } from '../../../shared/evaluation/slots.ts';
import { TEST_CASES_LABEL, sourceField, testCasesOfFiles } from '../../../shared/evaluation/test-case-sources.ts';
import { fieldOf } from './document.ts';
import type { EvaluationFile } from './document.ts';
import type { ReadSource, SourceProvenance } from './sources.ts';

/** What a ConfigMap's data may hold, keys and values together: the apiserver refuses more (1 MiB). */
export const MAX_CONFIG_MAP_BYTES = 1024 * 1024;

/** Annotations saying where a ConfigMap's test cases came from. */
export const SOURCE_ANNOTATIONS = {
  directory: `${GROUP}/test-cases-directory`,
  gitUrl: `${GROUP}/test-cases-git-url`,
  gitRef: `${GROUP}/test-cases-git-ref`,
  gitCommit: `${GROUP}/test-cases-git-commit`,
  gitPath: `${GROUP}/test-cases-git-path`,
} as const;

/**
 * The ConfigMap holding the test cases of spec.testCasesFrom[index]: `<evaluation>-cases-<index>-<hash of its
 * data>`. Named by its content, so an edited directory is a new ConfigMap, written before the Evaluation names it:
 * the controller never sees a spec naming a ConfigMap that is not there yet, nor new test cases under the old spec
 * (either would make it Invalid for a moment, or start Runs of a mix and delete them).
 */
export function casesConfigMapName(evaluation: string, index: number, data: Record<string, string>): string {
  // JSON of the sorted entries: unambiguous whatever a key or value holds (a separator could be in a value).
  const content = JSON.stringify(Object.keys(data).sort().map((key) => [key, data[key]]));
  return `${evaluation}-cases-${index}-${createHash('sha256').update(content).digest('hex').slice(0, 10)}`;
}

export interface ApplyPlan {
  /** The Evaluation to create or replace: every directory and git source now a configMap one. */
  evaluation: EvaluationObject;
  /**
   * The ConfigMaps of those sources, in source order: owned by the Evaluation when its uid is known (it exists),
   * else without an owner (written before the Evaluation is created, adopted right after).
   */
  configMaps(owner?: { name: string; uid: string }): V1ConfigMap[];
  /** The ConfigMaps' names, in source order. */
  configMapNames: string[];
}

function annotationsOf(provenance: SourceProvenance): Record<string, string> {
  if ('directory' in provenance) return { [SOURCE_ANNOTATIONS.directory]: provenance.directory };
  const { url, ref, path, commit } = provenance.git;
  return { [SOURCE_ANNOTATIONS.gitUrl]: url, ...(ref ? { [SOURCE_ANNOTATIONS.gitRef]: ref } : {}), [SOURCE_ANNOTATIONS.gitCommit]: commit, [SOURCE_ANNOTATIONS.gitPath]: path ?? '.' };
}

/** Bytes of a ConfigMap's data as the apiserver counts them: every key and every value. */
export const dataBytes = (data: Record<string, string>) => Object.entries(data).reduce((n, [key, value]) => n + Buffer.byteLength(key) + Buffer.byteLength(value), 0);

/**
 * The objects `tcab eval apply` writes for `evaluation` in `namespace`, given its directory and git sources read
 * (`read`, by index). Every test case of those sources is checked here first (the same parser as the dispatcher's),
 * so a bad file is refused before anything is written; every problem names the file and the field.
 */
export function planApply(evaluation: EvaluationFile, read: ReadonlyMap<number, ReadSource>, namespace: string): ApplyPlan {
  const { file, name, spec, rawSpec } = evaluation;
  const refuse = (problem: string): never => {
    throw new InvalidInputError(file, fieldOf(evaluation, problem));
  };
  const origin = new Map<string, string>();
  spec.testCases?.forEach((testCase, i) => origin.set(testCase.name, `spec.testCases[${i}]`));
  const from = spec.testCasesFrom ?? [];
  const rewritten: unknown[] = [...((rawSpec.testCasesFrom as unknown[] | undefined) ?? [])];
  const made: { name: string; data: Record<string, string>; annotations: Record<string, string> }[] = [];
  for (const [i, source] of from.entries()) {
    if ('configMap' in source) continue;
    const field = sourceField(source, i);
    const got = read.get(i);
    if (!got) throw new Error(`${field} was not read`);
    const checked = testCasesOfFiles(got.files, field, origin, 'file');
    if ('problem' in checked) refuse(checked.problem);
    const configMap = casesConfigMapName(name, i, got.files);
    if (configMap.length > 253) refuse(`${field}: its ConfigMap would be named ${configMap.length} characters long (<evaluation>-cases-${i}-<hash>); at most 253: shorten metadata.name`);
    const bytes = dataBytes(got.files);
    if (bytes > MAX_CONFIG_MAP_BYTES) {
      refuse(`${field}: its test cases are ${bytes} bytes, more than a ConfigMap holds (${MAX_CONFIG_MAP_BYTES} bytes, 1 MiB): split them into several directories (testCasesFrom takes up to 20)`);
    }
    rewritten[i] = { configMap: { name: configMap } };
    made.push({ name: configMap, data: got.files, annotations: annotationsOf(got.provenance) });
  }
  const newSpec = { ...rawSpec, ...(from.length > 0 ? { testCasesFrom: rewritten } : {}) };
  // The rewritten spec is what the cluster checks: a ConfigMap name given already (configMap: {name: x-cases-1}) is
  // refused here, naming the field, rather than by the controller after the apply.
  const checked = EvaluationSpec.safeParse(newSpec);
  if (!checked.success) refuse(`${formatIssues(checked.error, 'spec')} (once each directory and git source is its ConfigMap <evaluation>-cases-<index>-<hash>)`);
  const labels = { ...evaluation.labels };
  const annotations = { ...evaluation.annotations };
  return {
    evaluation: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: EVALUATION_KIND,
      metadata: { name, namespace, ...(Object.keys(labels).length > 0 ? { labels } : {}), ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
      spec: newSpec as EvaluationSpecInput,
    },
    configMapNames: made.map((m) => m.name),
    configMaps: (owner) => {
      const reference: V1OwnerReference | undefined = owner && { apiVersion: `${GROUP}/${VERSION}`, kind: EVALUATION_KIND, name: owner.name, uid: owner.uid };
      return made.map((m) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: m.name, namespace, labels: { [TEST_CASES_LABEL]: 'true', [EVALUATION_LABEL]: evaluationLabelValue(name) }, annotations: m.annotations, ...(reference ? { ownerReferences: [reference] } : {}) },
        data: m.data,
      }));
    },
  };
}
