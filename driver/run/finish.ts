// The end of a run, whatever happened before: a failure said on the stream and classified, what the run held given
// back (the gateway's token, a rotating login, the run's directories), and the result: usage, the wire's view of
// it, cost, published to every sink.
import type { RunResult, RunSpec, SessionRecord } from '../../shared/run.ts';
import { addTokens } from '../../shared/usage.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import { priceRun } from '../../shared/cost.ts';
import { loadCatalog } from '../../shared/catalog/load.ts';
import { usageDisagreements } from '../../shared/gateway.ts';
import { asStageFailure } from '../stages/context.ts';
import { teardown } from '../stages/teardown.ts';
import type { EventSink } from '../sinks/sink.ts';
import type { RunState } from './state.ts';

/** A run's usage: the sum over sessions, or the last report when the harness counts the whole thread. */
export function runTokens(sessions: SessionRecord[], scope: 'session' | 'thread' = 'session'): TokenUsage | null {
  const reported = sessions.map((s) => s.tokens).filter((t): t is TokenUsage => t !== null);
  if (reported.length === 0) return null;
  return scope === 'thread' ? reported.at(-1)! : reported.reduce(addTokens);
}

function sumReportedCost(sessions: SessionRecord[]): number | null {
  const costs = sessions.map((s) => s.reported_cost_usd).filter((c): c is number => c !== null);
  return costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
}

/** A step threw: the outcome its stage and kind say, the error on the stream. */
export function failRun(run: RunState, error: unknown): void {
  const failure = asStageFailure(error, run.running);
  run.outcome = failure.kind === 'timeout' ? 'timed_out' : failure.kind === 'cancelled' ? 'cancelled' : 'infrastructure_failed';
  run.message = failure.message;
  // Another attempt may succeed only where nothing of the agent's has run yet: before the first session.
  run.retryable = failure.kind === 'infrastructure' && failure.transient && run.sessions.length === 0;
  run.emit({ type: 'error', timestamp: run.now(), message: failure.message, code: `${failure.stage}_failed` });
}

/** Gives back what the run held, in this order, each whatever happened to the one before. */
export async function releaseRun(run: RunState, keep: boolean): Promise<void> {
  if (run.hosted) {
    // What the provider reported on the wire, then the token refused from now on (a process the agent left
    // behind cannot spend any more).
    run.wire = await run.hosted.wire();
    await run.hosted.close().catch(() => undefined);
  }
  const login = run.login;
  if (login) {
    // The rotated login back to the user's file, before the run HOME goes; then the next run may take it.
    try {
      if (run.ctx) await login.writeBack(run.ctx.dirs.home);
    } catch (error) {
      run.emit({ type: 'warning', timestamp: run.now(), message: `could not write the refreshed login back to ${login.login}: ${(error as Error).message}`, code: 'login_write_back_failed' });
    } finally {
      await login.release().catch(() => undefined);
    }
  }
  if (run.ctx) {
    try {
      await teardown(run.ctx, keep);
    } catch {
      // teardown already reported `teardown failed`; the run's outcome stands.
    }
  }
}

export interface ResultOptions {
  runId: string;
  sinks: EventSink[];
  modelCatalog?: string;
  attemptNumber?: { number: number; of: number };
}

/** The run's result, scrubbed, given to every sink (which are then closed). */
export async function publishResult(run: RunState, spec: RunSpec, options: ResultOptions): Promise<RunResult> {
  const { sessions, authMode, manifest } = run;
  const tokens = runTokens(sessions, run.usageScope);
  // The harness's own numbers against the wire's: a disagreement beyond rounding is said, never resolved by guessing.
  for (const disagreement of usageDisagreements(tokens, run.wire?.tokens ?? null)) {
    run.emit({ type: 'warning', timestamp: run.now(), message: `usage: ${disagreement} (the wire's is what the provider reported to the model gateway)`, code: 'usage_disagrees' });
  }
  const reported = sumReportedCost(sessions);
  const cost = manifest
    ? priceRun({ model: spec.model, idFamily: manifest.model_ids, tokens, reportedCostUsd: reported, authMode: authMode ?? 'api-key', catalog: loadCatalog(options.modelCatalog) })
    : undefined;
  const result: RunResult = {
    run_id: options.runId,
    harness_slug: spec.harness,
    harness_version: run.harnessVersion,
    model: spec.model,
    canonical_model: cost?.canonical_model ?? null,
    outcome: run.outcome,
    message: run.message,
    auth_mode: authMode,
    sessions,
    session_ids: [...new Set(sessions.map((s) => s.session_id).filter((s): s is string => s !== null))],
    exit_code: sessions.at(-1)?.exit_code ?? null,
    stages: run.timings,
    tokens,
    raw_usage: (sessions.length === 0 ? null : sessions.length === 1 ? run.rawUsage[0] : run.rawUsage) as RunResult['raw_usage'],
    wire: run.wire,
    reported_cost_usd: reported,
    actual_cost_usd: authMode === null ? null : (cost?.actual_cost_usd ?? null),
    comparable_cost_usd: cost?.comparable_cost_usd ?? null,
    catalog_version: cost?.catalog_version ?? null,
    cost_warnings: cost?.warnings ?? [],
    started_at: run.startedAt.toISOString(),
    finished_at: run.now(),
    event_count: run.seq,
    ...(options.attemptNumber ? { attempt: options.attemptNumber } : {}),
    ...(spec.testCase?.check ? { check: run.check ?? null } : {}),
    ...(run.retryable ? { retryable: true } : {}),
  };
  const clean = run.scrubber.result(result);
  for (const sink of options.sinks) sink.result(clean);
  await Promise.all(options.sinks.map((s) => s.close()));
  return clean;
}
