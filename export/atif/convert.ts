// toAtif: a run's normalized events (+ its result and spec when known) -> one ATIF trajectory. Pure and total:
// any event sequence gives a document AtifTrajectory accepts (export/atif/convert.property.test.ts). The field
// by field mapping, and what is left out and why, is the README's "Exporting runs: ATIF" section.
// The events must be the scrubbed ones a run published (the driver scrubs before any sink), so the trajectory
// carries no secret the events did not.
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import { ATIF_SCHEMA_VERSION } from './schema.ts';
import type { AtifAgent, AtifFinalMetrics, AtifStep, AtifTrajectory, JsonValue } from './schema.ts';
import { StepFold } from './steps.ts';
import type { LeftOut } from './steps.ts';
import { defined } from './tool-calls.ts';

/** What was asked for: a RunSpec (camelCase, as the Run resource carries it) fits, only these fields are read. */
export interface AtifSpec {
  harness: string;
  model?: string;
  prompt?: string;
}

/** Usage of a run without a RunResult (`tcab translate` of one recorded session). */
export interface AtifUsage {
  tokens: TokenUsage | null;
  /** The real charge, when known (reported by the harness); never an estimate. */
  cost_usd: number | null;
  harness_version?: string | null;
}

/**
 * The part of a Run's spec a trajectory uses, read leniently from the stored object (a Run the dispatcher refused
 * may hold anything): a non-string prompt or model is left out, never guessed.
 */
export function atifSpecOfRun(spec: Readonly<Record<string, unknown>> | undefined): AtifSpec {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return { harness: text(spec?.harness) ?? '', model: text(spec?.model), prompt: text(spec?.prompt) };
}

export interface AtifInput {
  /** The tcab run id; becomes trajectory_id. Omitted for a recorded transcript that never was a run. */
  runId?: string;
  /** The run's events in stream order, each with its observed timestamp. */
  events: readonly HarnessEvent[];
  result?: RunResult;
  spec?: AtifSpec;
  /** Read only when there is no result. */
  usage?: AtifUsage;
}

export const ATIF_NOTES =
  'Converted by tcab from its normalized event stream. tool_call_id is tcab-event-<n>, the position of the ' +
  "tool's event in the run's stream (the stream carries no harness call ids). Observations hold what tcab saw of " +
  "a call's outcome (success, exit code), not the tool's output, which the stream does not carry. Token usage " +
  'and cost are per run (final_metrics), not per step: the stream has no per-turn usage.';

function finalMetrics(tokens: TokenUsage | null, costUsd: number | null, steps: number, extra: Record<string, JsonValue>): AtifFinalMetrics {
  const prompt = tokens ? [tokens.input, tokens.cache_read, tokens.cache_write].filter((n): n is number => n !== null) : [];
  return {
    // ATIF's prompt tokens include cached ones; ours are disjoint classes, so the total is their sum.
    ...(prompt.length > 0 ? { total_prompt_tokens: prompt.reduce((a, b) => a + b, 0) } : {}),
    ...(tokens?.output != null ? { total_completion_tokens: tokens.output } : {}),
    ...(tokens?.cache_read != null ? { total_cached_tokens: tokens.cache_read } : {}),
    ...(costUsd !== null ? { total_cost_usd: costUsd } : {}),
    total_steps: steps,
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

function agentOf(input: AtifInput): AtifAgent {
  const { result, spec, usage } = input;
  const model = result?.model ?? spec?.model;
  return {
    name: result?.harness_slug || spec?.harness || 'unknown',
    // Required by ATIF; "unknown" when the run never probed the harness (e.g. it failed before the probe).
    version: result?.harness_version ?? usage?.harness_version ?? 'unknown',
    ...(model ? { model_name: model } : {}),
    ...(result?.canonical_model ? { extra: { canonical_model: result.canonical_model } } : {}),
  };
}

function runExtra(input: AtifInput, leftOut: LeftOut): Record<string, JsonValue> {
  const r = input.result;
  const run = r
    ? {
        outcome: r.outcome,
        message: r.message,
        exit_code: r.exit_code,
        auth_mode: r.auth_mode,
        started_at: r.started_at,
        finished_at: r.finished_at,
        session_ids: r.session_ids,
        // Usage per session is all the stream has below the run: ATIF's per-step metrics stay empty.
        sessions: r.sessions.map((s) => ({ index: s.index, session_id: s.session_id, exit_code: s.exit_code, signal: s.signal, is_error: s.is_error, duration_ms: s.duration_ms, tokens: s.tokens, reported_cost_usd: s.reported_cost_usd })),
        stages: r.stages,
        // The test case's verdict (issue 39): a trajectory read on its own says whether the work passed.
        ...(r.check !== undefined ? { check: r.check } : {}),
      }
    : {};
  return { tcab: defined({ run_id: input.runId, ...run, event_count: input.events.length, left_out: { ...leftOut } }) };
}

function costExtra(input: AtifInput): Record<string, JsonValue> {
  const r = input.result;
  const tokens = r ? r.tokens : input.usage?.tokens;
  return defined({
    tcab_tokens: tokens ?? undefined,
    reported_cost_usd: r?.reported_cost_usd ?? undefined,
    comparable_cost_usd: r?.comparable_cost_usd ?? undefined,
    catalog_version: r?.catalog_version ?? undefined,
    cost_warnings: r && r.cost_warnings.length > 0 ? r.cost_warnings : undefined,
    // What the model gateway measured on the wire (issue 34), beside the harness's own tcab_tokens.
    tcab_wire: r?.wire ?? undefined,
  });
}

/** The first session the run reported, else the first one an event carried. */
function sessionIdOf(input: AtifInput): string | undefined {
  const reported = input.result?.session_ids[0];
  if (reported !== undefined) return reported;
  for (const event of input.events) if (event.type !== 'system' && event.session_id !== undefined) return event.session_id;
  return undefined;
}

export function toAtif(input: AtifInput): AtifTrajectory {
  const sessionId = sessionIdOf(input);
  const fold = new StepFold(sessionId);
  // The prompt's send time is not in the stream: the step carries no timestamp rather than a guessed one.
  if (input.spec?.prompt !== undefined) fold.push({ source: 'user', message: input.spec.prompt });
  input.events.forEach((event, i) => fold.add(event, i + 1));
  const result = input.result;
  if (result && result.outcome !== 'succeeded') fold.push({ timestamp: result.finished_at, source: 'system', message: `run ${result.outcome}: ${result.message}`, extra: { tcab_type: 'outcome', outcome: result.outcome } });
  const steps: AtifStep[] = fold.finish();
  if (steps.length === 0) fold.push({ source: 'system', message: 'tcab: the run recorded no activity', extra: { tcab_type: 'empty' } });
  const costUsd = result ? result.actual_cost_usd : (input.usage?.cost_usd ?? null);
  return {
    schema_version: ATIF_SCHEMA_VERSION,
    ...(sessionId !== undefined ? { session_id: sessionId } : {}),
    ...(input.runId !== undefined ? { trajectory_id: input.runId } : {}),
    agent: agentOf(input),
    steps,
    notes: ATIF_NOTES,
    final_metrics: finalMetrics(result ? result.tokens : (input.usage?.tokens ?? null), costUsd, steps.length, costExtra(input)),
    extra: runExtra(input, fold.leftOut),
  };
}
