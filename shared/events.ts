// The normalized harness event: the one wire shape every producer (adapters, gg, the driver's stages, the
// dispatcher's lifecycle events) and every consumer (CLI, NATS subscribers) shares.
// Source of truth: spec/harness-events.txt. Wire JSON is snake_case and flat with an inline `type` discriminator.
// Add variants; never repurpose an existing one. deploy/schema/harness-event.schema.json is generated from this file.
import { z } from 'zod';

const timestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 time the line was observed (not a harness time)');
const sessionId = z.string().min(1).describe('Harness-reported session id; never minted by tcab');
const isSuccess = z.boolean();
const line = z.int().nonnegative();
const toolName = z.string().min(1).describe("The harness's raw tool name, when the event came from a tool call");

/** Fields every translated event carries. `system` events are built separately: they never carry a session id. */
const translated = {
  timestamp,
  session_id: sessionId.optional(),
};

export const AgentEvent = z.strictObject({
  type: z.literal('agent'),
  ...translated,
  message: z.string(),
});

export const ReasoningEvent = z.strictObject({
  type: z.literal('reasoning'),
  ...translated,
  message: z.string(),
});

export const CommandEvent = z.strictObject({
  type: z.literal('command'),
  ...translated,
  command: z.string(),
  working_directory: z.string().optional(),
  exit_code: z.int().optional(),
  is_success: isSuccess.optional(),
  tool_name: toolName.optional(),
});

const fileOperation = {
  ...translated,
  path: z.string(),
  start_line: line.optional(),
  end_line: line.optional(),
  is_success: isSuccess.optional(),
  tool_name: toolName.optional(),
};

export const ReadEvent = z.strictObject({ type: z.literal('read'), ...fileOperation });
export const WriteEvent = z.strictObject({ type: z.literal('write'), ...fileOperation });

export const SearchEvent = z.strictObject({
  type: z.literal('search'),
  ...translated,
  query: z.string(),
  path: z.string().optional(),
  is_success: isSuccess.optional(),
  tool_name: toolName.optional(),
});

export const ListEvent = z.strictObject({
  type: z.literal('list'),
  ...translated,
  path: z.string().optional(),
  is_success: isSuccess.optional(),
  tool_name: toolName.optional(),
});

export const SkillEvent = z.strictObject({
  type: z.literal('skill'),
  ...fileOperation,
  skill_name: z.string().optional(),
});

export const ORCHESTRATION_ACTIONS = ['subagent_started', 'subagent_completed', 'subagent_failed'] as const;
export const OrchestrationEvent = z.strictObject({
  type: z.literal('orchestration'),
  ...translated,
  action: z.enum(ORCHESTRATION_ACTIONS),
  subagent_id: z.string().optional(),
  subagent_name: z.string().optional(),
  is_success: isSuccess.optional(),
});

export const ErrorEvent = z.strictObject({
  type: z.literal('error'),
  ...translated,
  message: z.string(),
  code: z.string().optional(),
});

export const WarningEvent = z.strictObject({
  type: z.literal('warning'),
  ...translated,
  message: z.string(),
  code: z.string().optional(),
});

export const SYSTEM_STAGES = [
  'pull_image',
  'start_container',
  'install_harness',
  'probe_harness',
  'init_test_case',
  'teardown',
] as const;
export const SYSTEM_STATUSES = ['started', 'completed', 'failed'] as const;
export const SystemEvent = z.strictObject({
  type: z.literal('system'),
  timestamp,
  stage: z.enum(SYSTEM_STAGES),
  status: z.enum(SYSTEM_STATUSES),
  message: z.string(),
});

export const UnknownEvent = z.strictObject({
  type: z.literal('unknown'),
  ...translated,
  raw: z.json().describe('The original output: parsed JSON where the line was JSON, else the line as a string'),
  original_bytes: z
    .int()
    .nonnegative()
    .optional()
    .describe('Set when raw was cut: the size of the original line in bytes (raw ends with a truncation marker)'),
});

export const HarnessEvent = z.discriminatedUnion('type', [
  AgentEvent,
  ReasoningEvent,
  CommandEvent,
  ReadEvent,
  WriteEvent,
  SearchEvent,
  ListEvent,
  SkillEvent,
  OrchestrationEvent,
  ErrorEvent,
  WarningEvent,
  SystemEvent,
  UnknownEvent,
]);

export type HarnessEvent = z.infer<typeof HarnessEvent>;
export type HarnessEventType = HarnessEvent['type'];
export type EventOf<T extends HarnessEventType> = Extract<HarnessEvent, { type: T }>;
export type SystemStage = (typeof SYSTEM_STAGES)[number];
export type SystemStatus = (typeof SYSTEM_STATUSES)[number];
export type OrchestrationAction = (typeof ORCHESTRATION_ACTIONS)[number];

export const HARNESS_EVENT_TYPES = HarnessEvent.options.map((o) => o.shape.type.value) as HarnessEventType[];

/**
 * An event as an adapter produces it: everything but the timestamp and session id, which the translation
 * session stamps uniformly (the clock is injected there, and the session id comes from the adapter's state).
 */
export type DraftEvent = HarnessEvent extends infer E
  ? E extends HarnessEvent
    ? Omit<E, 'timestamp' | 'session_id'>
    : never
  : never;
