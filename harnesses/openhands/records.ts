// The OpenHands CLI `--headless --json` records and fields the translator reads, as zod schemas. Each JSON line is
// one SDK event (`event.model_dump()`, openhands-sdk `openhands/sdk/event/`), told apart by `kind`: MessageEvent,
// ActionEvent, ObservationEvent, AgentErrorEvent, ConversationErrorEvent (others, e.g. Condensation, PauseEvent,
// UserRejectObservation, are not modelled and become `unknown`). A record that fails its schema becomes `unknown`,
// never a default; fields the translator does not read may hold anything (z.object ignores them).
import { z } from 'zod';

const id = z.string().min(1);

export const OpenHandsRecord = z.object({ kind: z.string() });

/** An LLM content part: text is read, anything else (an image) is kept as `unknown`. */
export const TextContent = z.object({ type: z.literal('text'), text: z.string() });
/** An Anthropic thinking block as LiteLLM hands it on (`thinking_blocks`). */
export const ThinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string() });
const reasoning = {
  reasoning_content: z.string().nullable().optional(),
  thinking_blocks: z.array(z.unknown()).nullable().optional(),
};

/** MessageEvent: a user message (the prompt) or the agent's message without a tool call. */
export const MessageEvent = z.object({
  source: z.string(),
  llm_message: z.object({ role: z.string(), content: z.array(z.unknown()), ...reasoning }),
});

/**
 * ActionEvent: one tool call. The first call of a model response carries the response's visible text (`thought`)
 * and reasoning; `action` is null when the call failed validation (an AgentErrorEvent follows), `tool_call` is the
 * call as the model made it (name, arguments as a JSON string).
 */
export const ActionEvent = z.object({
  thought: z.array(z.unknown()),
  ...reasoning,
  action: z.record(z.string(), z.unknown()).nullable(),
  tool_name: z.string().min(1),
  tool_call_id: id,
  tool_call: z.object({ name: z.string().min(1), arguments: z.string() }).optional(),
});

/** ObservationEvent: a tool call's result, paired with its ActionEvent by tool_call_id. */
export const ObservationEvent = z.object({
  tool_name: z.string().min(1),
  tool_call_id: id,
  observation: z.object({ kind: z.string(), content: z.array(z.unknown()), is_error: z.boolean() }),
});

/** AgentErrorEvent: the scaffold refused or failed a call (unknown tool, invalid arguments); the model sees it. */
export const AgentErrorEvent = z.object({ tool_name: z.string().min(1), tool_call_id: id, error: z.string() });

/** ConversationErrorEvent: the run loop stopped on an error (a failed model call): the session's verdict. */
export const ConversationErrorEvent = z.object({ code: z.string().min(1), detail: z.string() });

/** The actions whose content the translator reports at the call itself (no outcome to wait for). */
export const FinishAction = z.object({ message: z.string() });
export const ThinkAction = z.object({ thought: z.string() });
