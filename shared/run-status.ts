// Status of a Run custom resource: written only by the dispatcher (status subresource). Kubernetes-style
// camelCase; derived from the driver's RunResult (NATS) and the driver Pod's state.
import { z } from 'zod';
import { OUTCOMES } from './run.ts';
import { TokenUsage } from './usage.ts';

export const RUN_PHASES = ['Pending', 'Dispatched', 'Starting', 'Running', 'Succeeded', 'Failed', 'Cancelled'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];
/** A Run in one of these never changes again. */
export const FINAL_PHASES: ReadonlySet<RunPhase> = new Set(['Succeeded', 'Failed', 'Cancelled']);

const time = z.string().describe('RFC 3339 time');

export const RunCondition = z.strictObject({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: time,
});

export const RunStatus = z.strictObject({
  phase: z.enum(RUN_PHASES).optional(),
  conditions: z.array(RunCondition).optional(),
  outcome: z.enum(OUTCOMES).optional(),
  message: z.string().optional(),
  pod: z.string().optional(),
  harnessVersion: z.string().optional(),
  canonicalModel: z.string().optional(),
  authMode: z.enum(['api-key', 'subscription']).optional(),
  sessionIds: z.array(z.string()).optional(),
  usage: TokenUsage.optional(),
  actualCostUsd: z.number().nonnegative().nullable().optional(),
  comparableCostUsd: z.number().nonnegative().nullable().optional(),
  catalogVersion: z.string().optional(),
  dispatchedTime: time.optional(),
  startTime: time.optional(),
  completionTime: time.optional(),
  eventsSubject: z.string().optional(),
  observedGeneration: z.int().optional(),
});
export type RunStatus = z.infer<typeof RunStatus>;
