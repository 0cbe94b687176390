// An Evaluation owns its Runs through a controller owner reference: the garbage collector deletes them with it, and
// the reference (not the label, which any Run may carry) says which Runs are an Evaluation's. The dispatcher's
// Evaluation controller writes it; it and `tcab eval` read it.
import type { V1OwnerReference } from '@kubernetes/client-node';
import { GROUP, VERSION } from './resources.ts';
import type { EvaluationObject, RunObject } from './resources.ts';

export const EVALUATION_KIND = 'Evaluation';

/** The owner reference each of the Evaluation's Runs carries. */
export function ownerReferenceOf(evaluation: EvaluationObject): V1OwnerReference {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: EVALUATION_KIND, name: evaluation.metadata!.name!, uid: evaluation.metadata!.uid!, controller: true, blockOwnerDeletion: true };
}

/** The Evaluation that owns a Run (its controller reference), if one does. */
export function evaluationOwnerOf(run: RunObject): { name: string; uid: string } | undefined {
  const owner = run.metadata?.ownerReferences?.find((o) => o.kind === EVALUATION_KIND && o.apiVersion.startsWith(`${GROUP}/`) && o.controller === true);
  return owner && { name: owner.name, uid: owner.uid };
}
