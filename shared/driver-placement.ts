// Where driver Pods run (issue 35: a cluster that loses a node): the chart's driver.nodeSelector, .tolerations, .spread
// and .nodeLostTolerationSeconds, handed to the dispatcher as one JSON variable (TCAB_DRIVER_PLACEMENT). One schema
// for both: the chart's values schema (shared/chart-values.ts) spreads this shape into `driver`, the dispatcher
// (dispatcher/config.ts) parses the variable with it, and dispatcher/pods/driver-pod.ts turns it into the Pod's
// nodeSelector, tolerations and topologySpreadConstraints.
import { z } from 'zod';

/** The taints a node gets when it stops reporting (not-ready) or cannot be reached (unreachable). */
export const NODE_LOST_TAINTS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'] as const;

/**
 * A Kubernetes toleration (core/v1 Toleration), with the apiserver's own rules between its fields checked here, so a
 * bad one stops the dispatcher at start (variable named) rather than failing every driver Pod's create.
 */
export const Toleration = z
  .strictObject({
    /** Empty: every taint key (then operator must be Exists). */
    key: z.string().optional(),
    /** Equal (Kubernetes' default), Exists; Lt and Gt compare numbers (feature gate TaintTolerationComparisonOperators). */
    operator: z.enum(['Exists', 'Equal', 'Lt', 'Gt']).optional(),
    value: z.string().optional(),
    /** Empty: every effect. */
    effect: z.enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    /** How long a NoExecute taint is tolerated before the Pod is evicted; unset: forever. */
    tolerationSeconds: z.int().optional(),
  })
  .superRefine((t, ctx) => {
    if (!t.key && t.operator !== 'Exists') ctx.addIssue({ code: 'custom', path: ['operator'], message: 'must be Exists when key is empty (a toleration of every taint)' });
    if (t.operator === 'Exists' && t.value) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be empty with operator Exists' });
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') ctx.addIssue({ code: 'custom', path: ['effect'], message: 'must be NoExecute when tolerationSeconds is set' });
  });
export type Toleration = z.infer<typeof Toleration>;

export const DriverSpread = z.strictObject({
  /** false: no topologySpreadConstraint; the scheduler places driver Pods as it likes (often several on one node). */
  enabled: z.boolean().default(true),
  /** The most driver Pods of one harness a topology domain may have above the emptiest one. */
  maxSkew: z.int().min(1).default(1),
  /** The node label whose values are the domains: kubernetes.io/hostname (each node), topology.kubernetes.io/zone... */
  topologyKey: z.string().min(1).default('kubernetes.io/hostname'),
  /** ScheduleAnyway: a preference (a Run never waits for it); DoNotSchedule: a Pod stays Pending rather than skew more. */
  whenUnsatisfiable: z.enum(['ScheduleAnyway', 'DoNotSchedule']).default('ScheduleAnyway'),
});
export type DriverSpread = z.infer<typeof DriverSpread>;

/** The placement fields of the chart's `driver` values, with their defaults (the same as charts/tcab/values.yaml). */
export const DriverPlacementFields = {
  /** Labels a node must have to run driver Pods. */
  nodeSelector: z.record(z.string(), z.string()).default({}),
  /** The operator's tolerations; one that tolerates a node-lost taint replaces the toleration tcab adds for it. */
  tolerations: z.array(Toleration).default([]),
  /** Driver Pods of the same harness spread over nodes: a node lost takes a share of each harness's runs, not all. */
  spread: DriverSpread.default(() => DriverSpread.parse({})),
  /** How long a driver Pod stays bound to a node that is not ready or unreachable before it is evicted (and retried). */
  nodeLostTolerationSeconds: z.int().min(0).default(30),
};

export const DriverPlacement = z.strictObject(DriverPlacementFields);
export type DriverPlacement = z.infer<typeof DriverPlacement>;

/** Whether `t` tolerates the NoExecute taint `key` (no value), as the scheduler and the taint manager match them. */
export function toleratesNoExecute(t: Toleration, key: string): boolean {
  const keyMatches = t.key ? t.key === key : t.operator === 'Exists';
  const effectMatches = !t.effect || t.effect === 'NoExecute';
  const valueMatches = t.operator === 'Exists' || ((t.operator ?? 'Equal') === 'Equal' && !t.value);
  return keyMatches && effectMatches && valueMatches;
}
