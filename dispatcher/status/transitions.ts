// Run status as a pure function of what the dispatcher observed. The dispatcher is the only writer of Run
// status; every write goes through here, so phases only move forward and a finished Run never changes again.
import type { RunResult } from '../../shared/run.ts';
import { usageDisagreements } from '../../shared/gateway.ts';
import { FINAL_PHASES, RUN_PHASES } from '../../shared/run-status.ts';
import type { RunAttempt, RunStatus } from '../../shared/run-status.ts';
import type { RunEgress } from '../../shared/egress.ts';
import { POD_DELETED } from './pod-disruption.ts';
import { RETRYABLE_REASONS } from './retry.ts';
import type { Disruption } from './pod-disruption.ts';

/** An infrastructure failure that ends the Run because it is not tried again: its class and why not (status/retry.ts). */
export interface NoRetry {
  reason: string;
  why: string;
}

export type Observation =
  /** egress: the profile the Run's Pod was made with (what it may reach outside the cluster). */
  | { kind: 'claimed'; pod: string; eventsSubject: string; egress?: RunEgress; at: string }
  | { kind: 'unavailable'; reason: string; at: string }
  /**
   * A queued Run held for provider back-pressure (claims/throttle.ts), or released: the Throttled condition says
   * so (True with why while held, False once released); the Run stays Pending either way.
   */
  | { kind: 'throttled'; held: boolean; message: string; at: string }
  /**
   * A queued Run whose subscription login (its refresh token rotates on use) another Run is using: the LoginBusy
   * condition says so while it waits, False once the login is free; the Run stays Pending either way.
   */
  | { kind: 'login-busy'; waiting: boolean; message: string; at: string }
  /** node: the node the Pod is bound to (recorded on the current attempt). */
  | { kind: 'pod'; phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'; scheduled?: boolean; node?: string; reason?: string; message?: string; exitCode?: number; noRetry?: NoRetry; at: string }
  /**
   * The current attempt ended on infrastructure and the Run goes again (status/retry.ts decided): the attempt is
   * closed with how it ended, and the Run is Pending until `nextAttemptAt` (back-off), then claimed anew.
   */
  | { kind: 'retry'; outcome: 'infrastructure_failed'; reason: string; message: string; attempt: number; of: number; nextAttemptAt: string; node?: string; at: string }
  /** disruption: how the Pod went (deleted, evicted, ...; see pod-disruption.ts). */
  | { kind: 'pod-gone'; disruption?: Disruption; noRetry?: NoRetry; at: string }
  /** disruption: set when the Pod was deleted, evicted or ended at its deadline while the driver ran. */
  | { kind: 'result'; result: RunResult; disruption?: Disruption; noRetry?: NoRetry; at: string }
  | { kind: 'cancel'; at: string }
  /** The driver said its test case's check started (shared/run-progress.ts): the sessions are over. */
  | { kind: 'checking'; node?: string; at: string };

/** The phases before the end, in order (shared/run-status.ts lists every phase in order). */
const ORDER: readonly string[] = RUN_PHASES.filter((p) => !FINAL_PHASES.has(p));

export function isFinal(status: RunStatus): boolean {
  return status.phase !== undefined && FINAL_PHASES.has(status.phase);
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, at: string) {
  return { type, status, reason, message, lastTransitionTime: at };
}

function withCondition(status: RunStatus, c: ReturnType<typeof condition>): RunStatus['conditions'] {
  return [...(status.conditions ?? []).filter((x) => x.type !== c.type), c];
}

/** Never moves backwards (a late "Pending" pod update after "Running", or "Running" after "Checking", changes nothing). */
function advance(status: RunStatus, phase: 'Starting' | 'Running' | 'Checking', at: string): RunStatus {
  if (ORDER.indexOf(status.phase ?? 'Pending') >= ORDER.indexOf(phase)) return status;
  // Checking implies Running (a look that missed Running): the start is when it was first seen running either way.
  const started = phase !== 'Starting';
  const advanced = { ...status, phase, ...(started && !status.startTime ? { startTime: at } : {}) };
  return started ? withCurrentAttempt(advanced, (a) => (a.startTime ? a : { ...a, startTime: at })) : advanced;
}

/** The node the current attempt's Pod is bound to, once known. */
function onNode(status: RunStatus, node: string | undefined): RunStatus {
  if (!node) return status;
  // A Pod is bound once: the first node seen stays (a later word about another node is not this Pod's).
  return withCurrentAttempt(status, (a) => (a.node ? a : { ...a, node }));
}

/** The status with its current attempt (the last) changed; unchanged when no attempt is recorded (a Run from before). */
function withCurrentAttempt(status: RunStatus, change: (attempt: RunAttempt) => RunAttempt): RunStatus {
  const attempts = status.attempts;
  if (!attempts || attempts.length === 0) return status;
  return { ...status, attempts: [...attempts.slice(0, -1), change(attempts.at(-1)!)] };
}

/** Closes the current attempt: how it ended (the first close stands: a later word does not rewrite it). */
function closeAttempt(status: RunStatus, outcome: NonNullable<RunStatus['outcome']>, reason: string, message: string, at: string, retried: boolean): RunStatus {
  return withCurrentAttempt(status, (a) => (a.outcome ? a : { ...a, outcome, reason, message, completionTime: at, ...(retried ? { retried: true } : {}) }));
}

const camel = (outcome: string) => outcome.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

/**
 * `reason`: the failure class of the end (NodeLost, ImagePullFailed, ... status/retry.ts), recorded on the attempt;
 * default: the outcome in CamelCase.
 */
function finish(status: RunStatus, phase: 'Succeeded' | 'Failed' | 'Cancelled', fields: Partial<RunStatus>, at: string, reason?: string): RunStatus {
  const outcome = fields.outcome ?? (phase === 'Succeeded' ? 'succeeded' : phase === 'Cancelled' ? 'cancelled' : 'infrastructure_failed');
  const closed = closeAttempt(status, outcome, reason ?? camel(outcome), fields.message ?? phase, at, false);
  const { nextAttemptTime: _waitOver, ...rest } = closed;
  return {
    ...rest,
    ...fields,
    phase,
    completionTime: at,
    conditions: withCondition(closed, condition('Finished', 'True', fields.outcome ?? phase, fields.message ?? phase, at)),
  };
}

/** Whether the harness's own usage agrees with what the model gateway measured on the wire (beyond rounding). */
function wireCondition(r: RunResult, at: string) {
  const disagreements = usageDisagreements(r.tokens, r.wire?.tokens ?? null);
  return disagreements.length === 0
    ? condition('UsageAgreesWithWire', 'True', 'Agrees', r.tokens ? 'the harness reported what the provider reported to the model gateway' : 'the harness reported no usage; the wire\'s is in wireUsage', at)
    : condition('UsageAgreesWithWire', 'False', 'Disagrees', disagreements.join('; '), at);
}

/**
 * What a driver's result puts in the Run status besides the phase, the start time and (when a disruption
 * overrides a "cancelled" result) the outcome and message. `sessionIds` is always among them (RunResult requires
 * session_ids) and no other observation sets it: a final status carries a result exactly when it has sessionIds
 * (first-result.ts relies on that).
 */
export function resultFields(r: RunResult) {
  return {
    outcome: r.outcome,
    message: r.message,
    harnessVersion: r.harness_version ?? undefined,
    canonicalModel: r.canonical_model ?? undefined,
    authMode: r.auth_mode ?? undefined,
    sessionIds: r.session_ids,
    ...(r.tokens ? { usage: r.tokens } : {}),
    actualCostUsd: r.actual_cost_usd,
    comparableCostUsd: r.comparable_cost_usd,
    ...(r.catalog_version ? { catalogVersion: r.catalog_version } : {}),
    // What the model gateway measured on the wire (issue 34), beside the harness's own usage.
    ...(r.check ? { check: { passed: r.check.passed, exitCode: r.check.exit_code, reward: r.check.reward, durationMs: r.check.duration_ms } } : {}),
    ...(r.wire ? { wireRequests: r.wire.requests, wireCostUsd: r.wire.cost_usd, ...(r.wire.tokens ? { wireUsage: r.wire.tokens } : {}) } : {}),
  } satisfies Partial<RunStatus>;
}

/** A waiting condition (Throttled, LoginBusy): True with its message while held (unchanged when it already says so), False once released. */
function waitCondition(status: RunStatus, type: 'Throttled' | 'LoginBusy', reason: string, held: boolean, message: string, at: string): RunStatus {
  const current = status.conditions?.find((c) => c.type === type);
  if (held) {
    if (current?.status === 'True' && current.message === message) return status;
    return { ...status, conditions: withCondition(status, condition(type, 'True', reason, message, at)) };
  }
  if (current?.status !== 'True') return status;
  return { ...status, conditions: withCondition(status, condition(type, 'False', 'Released', message, at)) };
}

const throttled = (status: RunStatus, held: boolean, message: string, at: string) => waitCondition(status, 'Throttled', 'ProviderThrottled', held, message, at);
const loginBusy = (status: RunStatus, waiting: boolean, message: string, at: string) => waitCondition(status, 'LoginBusy', 'LoginInUse', waiting, message, at);

export function nextStatus(status: RunStatus, observation: Observation): RunStatus {
  if (isFinal(status)) return status;
  const next = transition(status, observation);
  if (!isFinal(next)) return next;
  // A Run ended by an infrastructure failure it does not try again says so (a Run whose attempts are used up).
  const noRetry = 'noRetry' in observation ? observation.noRetry : undefined;
  if (noRetry) return { ...next, conditions: withCondition(next, condition('Retrying', 'False', 'NotRetried', `${noRetry.reason} is retried, but not this time: ${noRetry.why}`, observation.at)) };
  return notRetryable(next, observation.at);
}

/**
 * A Run that was tried again (it has a Retrying condition) and whose last attempt failed in a way that is never
 * retried (an agent or harness failure, a timeout, a budget, an infrastructure failure of no retried class): its
 * Retrying condition says why no attempt follows, instead of still saying that attempt started.
 */
function notRetryable(status: RunStatus, at: string): RunStatus {
  const last = status.attempts?.at(-1);
  // Ended between attempts (the last one recorded was retried): that attempt is not what ended the Run.
  if (status.phase !== 'Failed' || !last || last.retried || !status.conditions?.some((c) => c.type === 'Retrying')) return status;
  const how = `${status.outcome}${last.reason && last.reason !== camel(status.outcome ?? '') ? ` (${last.reason})` : ''}`;
  const message = `attempt ${last.number} ended ${how}, which is never retried: only an infrastructure failure of a retried class is (${RETRYABLE_REASONS.join(', ')})`;
  return { ...status, conditions: withCondition(status, condition('Retrying', 'False', 'NotRetryable', message, at)) };
}

function transition(status: RunStatus, observation: Observation): RunStatus {
  const at = observation.at;
  switch (observation.kind) {
    case 'throttled':
      return throttled(status, observation.held, observation.message, observation.at);
    case 'login-busy':
      return loginBusy(status, observation.waiting, observation.message, observation.at);
    case 'claimed': {
      // A Run held (provider back-pressure, a busy login) and now started: its conditions say it was released.
      const released = loginBusy(throttled(status, false, 'started: no longer held for provider back-pressure', at), false, 'started: the login is this run\'s now', at);
      const number = (status.attempts?.length ?? 0) + 1;
      const { nextAttemptTime: _waitOver, ...rest } = released;
      const retrying = rest.conditions?.find((c) => c.type === 'Retrying')?.status === 'True';
      const conditions = withCondition(rest, condition('Dispatched', 'True', 'PodCreated', `driver pod ${observation.pod} created`, at));
      return {
        ...rest,
        phase: 'Dispatched',
        pod: observation.pod,
        eventsSubject: observation.eventsSubject,
        ...(observation.egress ? { egress: observation.egress } : {}),
        // The Run's first dispatch stays its dispatch time; each attempt has its own.
        dispatchedTime: status.dispatchedTime ?? at,
        attempts: [...(status.attempts ?? []), { number, pod: observation.pod, dispatchedTime: at }],
        conditions: retrying ? withCondition({ conditions }, condition('Retrying', 'False', 'AttemptStarted', `attempt ${number} started: driver pod ${observation.pod}`, at)) : conditions,
      };
    }
    case 'retry': {
      const closed = closeAttempt(onNode(status, observation.node), observation.outcome, observation.reason, observation.message, at, true);
      const { pod: _previousPod, ...rest } = closed;
      const message = `attempt ${observation.attempt} of ${observation.of} failed on infrastructure (${observation.reason}: ${observation.message}); attempt ${observation.attempt + 1} starts at ${observation.nextAttemptAt} at the earliest`;
      return { ...rest, phase: 'Pending', nextAttemptTime: observation.nextAttemptAt, conditions: withCondition(closed, condition('Retrying', 'True', observation.reason, message, at)) };
    }
    case 'unavailable':
      return finish(status, 'Failed', { outcome: 'infrastructure_failed', message: observation.reason }, at, 'Unavailable');
    case 'cancel':
      return finish(status, 'Cancelled', { outcome: 'cancelled', message: 'cancelled by request' }, at);
    case 'checking': {
      // Only an attempt in play checks: a queued Run (before its claim, between attempts) has no Pod to run one.
      if (status.phase === undefined || status.phase === 'Pending') return status;
      const checking = advance(onNode(status, observation.node), 'Checking', at);
      if (checking === status) return status;
      return { ...checking, conditions: withCondition(checking, condition('Checking', 'True', 'CheckStarted', "the agent's sessions are over; the test case's check runs", at)) };
    }
    case 'pod-gone': {
      const disruption = observation.disruption ?? POD_DELETED;
      return finish(status, 'Failed', { outcome: disruption.outcome, message: disruption.message }, at, disruption.reason);
    }
    case 'result': {
      const r = observation.result;
      // The driver reports "cancelled" when SIGTERM stops it. Nobody cancelled the Run when its Pod was deleted,
      // evicted or ended at its deadline under it: the Pod's reason is the outcome (the spend so far still counts).
      const disruption = r.outcome === 'cancelled' ? observation.disruption : undefined;
      const outcome = disruption?.outcome ?? r.outcome;
      const phase = outcome === 'succeeded' ? 'Succeeded' : outcome === 'cancelled' ? 'Cancelled' : 'Failed';
      const reason = disruption?.reason ?? (r.retryable === true && outcome === 'infrastructure_failed' ? 'InstallFailed' : undefined);
      const finished = finish(status, phase, { ...resultFields(r), outcome, message: disruption?.message ?? r.message, startTime: status.startTime ?? r.started_at }, at, reason);
      return r.wire?.tokens ? { ...finished, conditions: withCondition(finished, wireCondition(r, at)) } : finished;
    }
    case 'pod':
      switch (observation.phase) {
        case 'Pending':
          // Not yet on a node: still only Dispatched (the claim). On a node (pulling, creating): Starting.
          return observation.scheduled === false ? status : advance(onNode(status, observation.node), 'Starting', at);
        case 'Running':
          return advance(onNode(status, observation.node), 'Running', at);
        case 'Succeeded':
          // The driver's result (NATS) carries the outcome; a clean exit without one is waited for by the caller.
          return status;
        case 'Failed':
        case 'Unknown': {
          const why = [observation.reason, observation.message, observation.exitCode !== undefined ? `exit code ${observation.exitCode}` : undefined].filter(Boolean).join(': ');
          const outcome = observation.reason === 'DeadlineExceeded' ? 'timed_out' : observation.exitCode === 1 ? 'harness_failed' : 'infrastructure_failed';
          const reason = observation.reason && /^[A-Z][A-Za-z]*$/.test(observation.reason) ? observation.reason : observation.phase === 'Unknown' ? 'NodeLost' : undefined;
          return finish(onNode(status, observation.node), 'Failed', { outcome, message: `driver pod failed${why ? ` (${why})` : ''}` }, at, reason);
        }
      }
  }
}
