// The dispatcher's Kubernetes objects as TypeScript sees them, and the API coordinates of our CRDs.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { HarnessConfigSpec } from '../shared/harness-config.ts';
import type { RunStatus } from '../shared/run-status.ts';
import type { EvaluationSpecInput, EvaluationStatus } from '../shared/evaluation/schema.ts';
import { GROUP, VERSION } from '../shared/api-group.ts';

/** A driver Pod's egress (RunEgress: profile, hosts, reason) as JSON: a status rebuilt from the Pod says the same. */
export const EGRESS_ANNOTATION = `${GROUP}/egress`;

export { GROUP, VERSION };
export const RUNS = 'runs';
export const HARNESS_CONFIGS = 'harnessconfigs';
export const EVALUATIONS = 'evaluations';

export interface RunObject extends KubernetesObject {
  spec: Record<string, unknown> & { harness?: string; cancel?: boolean };
  status?: RunStatus;
}

export interface HarnessConfigObject extends KubernetesObject {
  spec: HarnessConfigSpec;
}

/** An Evaluation as the apiserver holds it: the spec as written (defaults not applied), the status its controller wrote. */
export interface EvaluationObject extends KubernetesObject {
  spec: EvaluationSpecInput;
  status?: EvaluationStatus;
}

export const runsPath = (namespace: string) => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${RUNS}`;
export const harnessConfigsPath = () => `/apis/${GROUP}/${VERSION}/${HARNESS_CONFIGS}`;
export const evaluationsPath = (namespace: string) => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${EVALUATIONS}`;
