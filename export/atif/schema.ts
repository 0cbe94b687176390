// ATIF, Harbor's Agent Trajectory Interchange Format (RFC 0001), as harbor==0.26.0 defines it in
// harbor/models/trajectories/*.py (pydantic, every model `extra="forbid"`). One zod schema per model, field for field,
// with the models' validators as refinements, so a document this accepts is one Harbor's own models accept (the
// test export/atif/harbor.test.ts checks that claim against the real package). Types are inferred from here.
// Producers write the latest version Harbor reads; older versions are accepted as Harbor accepts them.
import { z } from 'zod';

export const HARBOR_VERSION = '0.26.0';
export const ATIF_SCHEMA_VERSIONS = ['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6', 'ATIF-v1.7', 'ATIF-v1.8'] as const;
export const ATIF_SCHEMA_VERSION = 'ATIF-v1.8';

export type JsonValue = z.core.util.JSONType;

/** `dict[str, Any]`: free JSON (we only ever put JSON in it). */
const extra = z.record(z.string(), z.json());

/**
 * Step.timestamp is checked with Python's datetime.fromisoformat (after Z -> +00:00). This accepts its extended
 * forms (date, or date and time, optional offset); Python also reads the basic form (20261205T1000), which no
 * producer of ours writes and this refuses: stricter, never looser.
 */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?)?$/;

export const AtifImageSource = z.strictObject({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: z.string(),
});

export const AtifAudioSource = z.strictObject({
  media_type: z.enum(['audio/wav', 'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/ogg', 'audio/flac', 'audio/webm', 'audio/aiff']),
  path: z.string(),
  duration_sec: z.number().min(0).nullish(),
});

export const AtifContentPart = z
  .strictObject({
    type: z.enum(['text', 'image', 'audio']),
    text: z.string().nullish(),
    source: z.union([AtifImageSource, AtifAudioSource]).nullish(),
  })
  .superRefine((part, ctx) => {
    if (part.type === 'text') {
      if (part.text == null) ctx.addIssue({ code: 'custom', message: "'text' field is required when type='text'" });
      if (part.source != null) ctx.addIssue({ code: 'custom', message: "'source' field is not allowed when type='text'" });
      return;
    }
    if (part.source == null) return ctx.addIssue({ code: 'custom', message: `'source' field is required when type='${part.type}'` });
    if (part.text != null) ctx.addIssue({ code: 'custom', message: `'text' field is not allowed when type='${part.type}'` });
    if (part.source.media_type.startsWith('image/') !== (part.type === 'image')) ctx.addIssue({ code: 'custom', message: `type='${part.type}' does not match the source's media_type` });
  });

const message = z.union([z.string(), z.array(AtifContentPart)]);

export const AtifAgent = z.strictObject({
  name: z.string().describe('The name of the agent system'),
  version: z.string().describe('The version identifier of the agent system'),
  model_name: z.string().nullish(),
  tool_definitions: z.array(extra).nullish(),
  extra: extra.nullish(),
});

export const AtifToolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: extra,
  extra: extra.nullish(),
});

export const AtifSubagentTrajectoryRef = z
  .strictObject({
    trajectory_id: z.string().nullish(),
    session_id: z.string().nullish(),
    trajectory_path: z.string().nullish(),
    extra: extra.nullish(),
  })
  .refine((ref) => ref.trajectory_id != null || ref.trajectory_path != null, 'SubagentTrajectoryRef must be resolvable: set either `trajectory_id` or `trajectory_path`');

export const AtifObservationResult = z.strictObject({
  source_call_id: z.string().nullish(),
  content: message.nullish(),
  subagent_trajectory_ref: z.array(AtifSubagentTrajectoryRef).nullish(),
  extra: extra.nullish(),
});

export const AtifObservation = z.strictObject({ results: z.array(AtifObservationResult) });

export const AtifMetrics = z.strictObject({
  prompt_tokens: z.int().nullish(),
  completion_tokens: z.int().nullish(),
  cached_tokens: z.int().nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.int()).nullish(),
  completion_token_ids: z.array(z.int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: extra.nullish(),
});

export const AtifFinalMetrics = z.strictObject({
  total_prompt_tokens: z.int().nullish(),
  total_completion_tokens: z.int().nullish(),
  total_cached_tokens: z.int().nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: z.int().min(0).nullish(),
  extra: extra.nullish(),
});

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

export const AtifStep = z
  .strictObject({
    step_id: z.int().min(1),
    timestamp: z.string().regex(ISO_8601, 'Invalid ISO 8601 timestamp').nullish(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message,
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(AtifToolCall).nullish(),
    observation: AtifObservation.nullish(),
    metrics: AtifMetrics.nullish(),
    is_copied_context: z.boolean().nullish(),
    llm_call_count: z.int().min(0).nullish(),
    extra: extra.nullish(),
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const field of AGENT_ONLY) {
        if (step[field] != null) ctx.addIssue({ code: 'custom', path: [field], message: `Field '${field}' is only applicable when source is 'agent', but source is '${step.source}'` });
      }
    }
    if (step.llm_call_count === 0 && step.source === 'agent') {
      for (const field of ['metrics', 'reasoning_content'] as const) {
        if (step[field] != null) ctx.addIssue({ code: 'custom', path: [field], message: `Field '${field}' must be absent when llm_call_count is 0` });
      }
    }
  });

interface TrajectoryShape {
  schema_version?: (typeof ATIF_SCHEMA_VERSIONS)[number];
  session_id?: string | null;
  trajectory_id?: string | null;
  agent: z.infer<typeof AtifAgent>;
  steps: z.infer<typeof AtifStep>[];
  notes?: string | null;
  final_metrics?: z.infer<typeof AtifFinalMetrics> | null;
  continued_trajectory_ref?: string | null;
  extra?: Record<string, JsonValue> | null;
  subagent_trajectories?: TrajectoryShape[] | null;
}

export const AtifTrajectory: z.ZodType<TrajectoryShape> = z.lazy(() =>
  z
    .strictObject({
      schema_version: z.enum(ATIF_SCHEMA_VERSIONS).optional(),
      session_id: z.string().nullish(),
      trajectory_id: z.string().nullish(),
      agent: AtifAgent,
      steps: z.array(AtifStep).min(1),
      notes: z.string().nullish(),
      final_metrics: AtifFinalMetrics.nullish(),
      continued_trajectory_ref: z.string().nullish(),
      extra: extra.nullish(),
      subagent_trajectories: z.array(AtifTrajectory).nullish(),
    })
    .superRefine((trajectory, ctx) => {
      trajectory.steps.forEach((step, i) => {
        if (step.step_id !== i + 1) ctx.addIssue({ code: 'custom', path: ['steps', i, 'step_id'], message: `expected ${i + 1} (sequential from 1), got ${step.step_id}` });
        const callIds = new Set((step.tool_calls ?? []).map((call) => call.tool_call_id));
        for (const result of step.observation?.results ?? []) {
          if (result.source_call_id != null && !callIds.has(result.source_call_id)) {
            ctx.addIssue({ code: 'custom', path: ['steps', i, 'observation'], message: `source_call_id '${result.source_call_id}' is not found in step ${step.step_id}'s tool_calls` });
          }
        }
      });
      const seen = new Set<string>();
      (trajectory.subagent_trajectories ?? []).forEach((sub, i) => {
        if (sub.trajectory_id == null) ctx.addIssue({ code: 'custom', path: ['subagent_trajectories', i, 'trajectory_id'], message: 'required for embedded subagents' });
        else if (seen.has(sub.trajectory_id)) ctx.addIssue({ code: 'custom', path: ['subagent_trajectories', i, 'trajectory_id'], message: 'not unique within subagent_trajectories' });
        else seen.add(sub.trajectory_id);
      });
    }),
);
export type AtifTrajectory = z.infer<typeof AtifTrajectory>;
export type AtifStep = z.infer<typeof AtifStep>;
export type AtifToolCall = z.infer<typeof AtifToolCall>;
export type AtifObservationResult = z.infer<typeof AtifObservationResult>;
export type AtifFinalMetrics = z.infer<typeof AtifFinalMetrics>;
export type AtifAgent = z.infer<typeof AtifAgent>;
