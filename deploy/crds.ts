// The project's CustomResourceDefinitions, built from the shared zod schemas (RunSpec, RunStatus,
// HarnessConfigSpec, EvaluationSpec, EvaluationStatus). `npm run generate` writes them to deploy/crds/ and charts/tcab/crds/; a test fails on drift.
import { RunSpec } from '../shared/run.ts';
import { RunStatus } from '../shared/run-status.ts';
import { HarnessConfigSpec } from '../shared/harness-config.ts';
import { EvaluationSpec, EvaluationStatus } from '../shared/evaluation/schema.ts';
import { structuralSchema } from '../shared/crd.ts';
import { GROUP, VERSION } from '../shared/api-group.ts';

/** Every object's own fields, worded as Kubernetes' built-in types word them, so `kubectl explain` documents them too. */
const OBJECT_FIELDS = {
  apiVersion: { type: 'string', description: 'The versioned schema of this representation of an object (group/version)' },
  kind: { type: 'string', description: 'The REST resource this object represents' },
  // No description: the apiserver refuses anything on metadata but name/generateName rules ("metadata is implicitly
  // specified"), and `kubectl explain run.metadata` shows ObjectMeta's own documentation.
  metadata: { type: 'object' },
};

interface CrdShape {
  kind: string;
  plural: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  /** The object's description (`kubectl explain <kind>`). */
  description: string;
  columns: object[];
  spec: Parameters<typeof structuralSchema>[0];
  /** With a status subresource: written by a controller only. */
  status?: Parameters<typeof structuralSchema>[0];
}

/** One CRD of the group, one served and stored version, its schema generated from the zod spec (and status). */
function crdOf(shape: CrdShape): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${shape.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: shape.kind, listKind: `${shape.kind}List`, plural: shape.plural, singular: shape.kind.toLowerCase(), shortNames: shape.shortNames, categories: ['tcab'] },
      scope: shape.scope,
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          ...(shape.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: shape.columns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: shape.description,
              required: ['spec'],
              properties: { ...OBJECT_FIELDS, spec: structuralSchema(shape.spec), ...(shape.status ? { status: structuralSchema(shape.status) } : {}) },
            },
          },
        },
      ],
    },
  };
}

const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const runCrd = (): object =>
  crdOf({
    kind: 'Run',
    plural: 'runs',
    shortNames: ['trun', 'tcabrun'],
    scope: 'Namespaced',
    description: 'One evaluation run of a coding-agent harness',
    columns: [
      { name: 'Harness', type: 'string', jsonPath: '.spec.harness' },
      { name: 'Model', type: 'string', jsonPath: '.spec.model' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Cost', type: 'number', jsonPath: '.status.actualCostUsd', description: 'Actual cost in USD' },
      { name: 'Passed', type: 'boolean', jsonPath: '.status.check.passed', description: "The test case's check passed" },
      AGE,
    ],
    spec: RunSpec,
    status: RunStatus,
  });

// Cluster-wide: one object per harness slug (its name), shared by every namespace's Runs.
export const harnessConfigCrd = (): object =>
  crdOf({
    kind: 'HarnessConfig',
    plural: 'harnessconfigs',
    shortNames: ['hc'],
    scope: 'Cluster',
    description: 'Mutable per-harness knobs; the object name is the harness slug',
    columns: [{ name: 'Max-Parallelism', type: 'integer', jsonPath: '.spec.maxParallelism' }, AGE],
    spec: HarnessConfigSpec,
  });

// Progress at a glance; the per-cell figures are in the status (`tcab eval status NAME` prints them as a table).
export const evaluationCrd = (): object =>
  crdOf({
    kind: 'Evaluation',
    plural: 'evaluations',
    shortNames: ['teval'],
    scope: 'Namespaced',
    description: 'A harness x model x test-case matrix with repeats: its controller makes one Run per slot and sums up what they came to',
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Final', type: 'integer', jsonPath: '.status.runs.final', description: 'Runs that ended' },
      { name: 'Total', type: 'integer', jsonPath: '.status.runs.total', description: 'Runs of the matrix' },
      { name: 'Scored', type: 'integer', jsonPath: '.status.runs.scored', description: 'Final runs whose check ran' },
      { name: 'Passed', type: 'integer', jsonPath: '.status.runs.passed', description: 'Scored runs whose check passed' },
      AGE,
    ],
    spec: EvaluationSpec,
    status: EvaluationStatus,
  });

export const CRDS = { 'runs.tcab.dev.yaml': runCrd, 'harnessconfigs.tcab.dev.yaml': harnessConfigCrd, 'evaluations.tcab.dev.yaml': evaluationCrd } as const;
export type CrdFile = keyof typeof CRDS;
