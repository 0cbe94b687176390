// The project's CustomResourceDefinitions, built from the shared zod schemas (RunSpec, RunStatus,
// HarnessConfigSpec). `npm run generate` writes them to deploy/crds/ and charts/tcab/crds/; a test fails on drift.
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

export function runCrd(): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `runs.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'Run', listKind: 'RunList', plural: 'runs', singular: 'run', shortNames: ['trun', 'tcabrun'], categories: ['tcab'] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Harness', type: 'string', jsonPath: '.spec.harness' },
            { name: 'Model', type: 'string', jsonPath: '.spec.model' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Cost', type: 'number', jsonPath: '.status.actualCostUsd', description: 'Actual cost in USD' },
            { name: 'Passed', type: 'boolean', jsonPath: '.status.check.passed', description: "The test case's check passed" },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'One evaluation run of a coding-agent harness',
              required: ['spec'],
              properties: {
                ...OBJECT_FIELDS,
                spec: structuralSchema(RunSpec),
                status: structuralSchema(RunStatus),
              },
            },
          },
        },
      ],
    },
  };
}

export function harnessConfigCrd(): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `harnessconfigs.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'HarnessConfig', listKind: 'HarnessConfigList', plural: 'harnessconfigs', singular: 'harnessconfig', shortNames: ['hc'], categories: ['tcab'] },
      // Cluster-wide: one object per harness slug (its name), shared by every namespace's Runs.
      scope: 'Cluster',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          additionalPrinterColumns: [{ name: 'Max-Parallelism', type: 'integer', jsonPath: '.spec.maxParallelism' }, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'Mutable per-harness knobs; the object name is the harness slug',
              required: ['spec'],
              properties: { ...OBJECT_FIELDS, spec: structuralSchema(HarnessConfigSpec) },
            },
          },
        },
      ],
    },
  };
}

export function evaluationCrd(): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `evaluations.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'Evaluation', listKind: 'EvaluationList', plural: 'evaluations', singular: 'evaluation', shortNames: ['teval'], categories: ['tcab'] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          // Progress at a glance; the per-cell figures are in the status (`tcab eval status NAME` prints them as a table).
          additionalPrinterColumns: [
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Final', type: 'integer', jsonPath: '.status.runs.final', description: 'Runs that ended' },
            { name: 'Total', type: 'integer', jsonPath: '.status.runs.total', description: 'Runs of the matrix' },
            { name: 'Scored', type: 'integer', jsonPath: '.status.runs.scored', description: 'Final runs whose check ran' },
            { name: 'Passed', type: 'integer', jsonPath: '.status.runs.passed', description: 'Scored runs whose check passed' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A harness x model x test-case matrix with repeats: its controller makes one Run per slot and sums up what they came to',
              required: ['spec'],
              properties: { ...OBJECT_FIELDS, spec: structuralSchema(EvaluationSpec), status: structuralSchema(EvaluationStatus) },
            },
          },
        },
      ],
    },
  };
}

export const CRDS = { 'runs.tcab.dev.yaml': runCrd, 'harnessconfigs.tcab.dev.yaml': harnessConfigCrd, 'evaluations.tcab.dev.yaml': evaluationCrd } as const;
export type CrdFile = keyof typeof CRDS;
