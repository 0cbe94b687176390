// Status of a Run custom resource: written only by the dispatcher (status subresource). Kubernetes-style
// camelCase; derived from the driver's RunResult (NATS) and the driver Pod's state.
import { z } from 'zod';
import { OUTCOMES } from './run.ts';
import { TokenUsage } from './usage.ts';
import { RunEgress } from './egress.ts';

/** Checking: the agent's sessions are over and the test case's check runs (the driver says so: shared/run-progress.ts). */
export const RUN_PHASES = ['Pending', 'Dispatched', 'Starting', 'Running', 'Checking', 'Succeeded', 'Failed', 'Cancelled'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];
/** A Run in one of these never changes again. */
export const FINAL_PHASES: ReadonlySet<RunPhase> = new Set(['Succeeded', 'Failed', 'Cancelled']);

const time = z.string().describe('RFC 3339 time');

export const RunCondition = z
  .strictObject({
    type: z.string().min(1).describe('What the condition is about: Dispatched, Checking, Finished, Retrying, ...'),
    status: z.enum(['True', 'False', 'Unknown']).describe('Whether the condition holds'),
    reason: z.string().optional().describe('Machine-readable reason in CamelCase, or the outcome for Finished'),
    message: z.string().optional().describe('Human-readable detail'),
    lastTransitionTime: time.describe('When the condition last changed (RFC 3339)'),
  })
  .describe('One step of the Run, as Kubernetes conditions report it');

export const RunAttempt = z
  .strictObject({
    number: z.int().min(1).describe('1 for the first attempt'),
    pod: z.string().describe('The driver Pod of this attempt'),
    node: z.string().optional().describe('The node the Pod ran on, once scheduled'),
    dispatchedTime: time.describe('When its driver Pod was created (RFC 3339)'),
    startTime: time.optional().describe('When its driver Pod started running (RFC 3339)'),
    completionTime: time.optional().describe('When the attempt ended (RFC 3339); absent while it runs'),
    outcome: z.enum(OUTCOMES).optional().describe('How the attempt ended; absent while it runs'),
    reason: z.string().optional().describe('Why, in CamelCase: the failure class of an infrastructure failure (NodeLost, PodEvicted, ImagePullFailed, InstallFailed, ...), else the outcome'),
    message: z.string().optional().describe('Why the attempt ended as it did, in words'),
    retried: z.boolean().optional().describe('True when another attempt followed this one'),
  })
  .describe('One attempt of the Run: its own driver Pod, events and result');
export type RunAttempt = z.infer<typeof RunAttempt>;

export const RunStatus = z.strictObject({
  phase: z
    .enum(RUN_PHASES)
    .optional()
    .describe("Pending (queued), Dispatched (driver Pod created), Starting, Running, Checking (the test case's check runs), then one of Succeeded, Failed or Cancelled, which never change"),
  conditions: z.array(RunCondition).optional().describe('The steps the Run went through, newest state of each'),
  outcome: z.enum(OUTCOMES).optional().describe("How the run ended (the driver's outcome, or the driver Pod's fate when it reported none)"),
  message: z.string().optional().describe('Why the run ended as it did, in words'),
  pod: z.string().optional().describe('Name of the driver Pod running this Run'),
  harnessVersion: z.string().optional().describe('Version of the harness CLI the run installed and ran'),
  canonicalModel: z.string().optional().describe("The model catalogue's id for spec.model, when it knows the model"),
  authMode: z.enum(['api-key', 'subscription']).optional().describe('How the harness authenticated: an API key or a subscription login'),
  sessionIds: z.array(z.string()).optional().describe("The harness's own session ids, one per session that reported one"),
  usage: TokenUsage.optional().describe('Tokens of all sessions together, by class; a null class is one the harness does not report'),
  actualCostUsd: z.number().nonnegative().nullable().optional().describe('Cost in USD: the charge the harness reported, else with a subscription the comparable cost; null when neither is known'),
  comparableCostUsd: z
    .number()
    .nonnegative()
    .nullable()
    .optional()
    .describe("The tokens at the model's list prices (model catalogue) in USD, whatever the auth mode, to compare runs; null when unpriced"),
  catalogVersion: z.string().optional().describe('Version of the model catalogue the costs were computed with'),
  wireUsage: TokenUsage.optional().describe('Tokens the model gateway measured on the wire, by class (the harness-reported ones are usage)'),
  wireCostUsd: z.number().nonnegative().nullable().optional().describe("The wire's tokens at the model catalogue's list prices in USD; null when unpriced"),
  wireRequests: z.int().nonnegative().optional().describe('Requests the model gateway forwarded for the run'),
  check: z
    .strictObject({
      passed: z.boolean().describe('The check exited 0 within its timeout'),
      exitCode: z.int().nullable().describe('null when it was killed or could not start'),
      reward: z.number().min(0).max(1).nullable().describe('What the check wrote to $TCAB_REWARD_FILE; null when nothing valid'),
      durationMs: z.int().nonnegative().describe('How long the check ran, in milliseconds'),
    })
    .optional()
    .describe("The verdict of the test case's check (the result's check has its output too); absent when it has none or it did not run"),
  dispatchedTime: time.optional().describe('When the driver Pod was created (RFC 3339)'),
  startTime: time.optional().describe('When the driver started the run (RFC 3339)'),
  completionTime: time.optional().describe('When the Run reached its final phase (RFC 3339)'),
  egress: RunEgress.optional(),
  attempts: z.array(RunAttempt).optional().describe('Every attempt so far, oldest first; the last is the current one, and the Run ends as its last attempt did'),
  nextAttemptTime: time.optional().describe('While Pending after an infrastructure failure: when the next attempt may start (back-off)'),
  eventsSubject: z.string().optional().describe("NATS subjects carrying this run's events and result (`tcab events follow` reads them)"),
  observedGeneration: z.int().optional().describe('The metadata.generation of the Run this status was written for'),
}).describe('What became of the Run: written by the dispatcher only (status subresource)');
export type RunStatus = z.infer<typeof RunStatus>;
