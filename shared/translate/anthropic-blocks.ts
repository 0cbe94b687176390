// Anthropic Messages content blocks, as Claude Code prints them in its stream JSON and as Qwen Code and Amp copy
// them ("Claude-Code-compatible"): one reading of an assistant message's content for the three translators, so a
// block reads the same everywhere (issue 21: the copies had drifted). Block shapes:
// https://docs.anthropic.com/en/api/messages (content blocks); shared/reference/harnesses.md sections 1 and 4.
import { z } from 'zod';
import type { DraftEvent } from '../events.ts';
import { unknownValue } from './best-effort.ts';
import { compileSchema } from './compiled-schema.ts';
import { AnyJsonObject } from './json-object.ts';
import type { JsonObject } from './json.ts';

const id = z.string().min(1);
const text = z.object({ type: z.literal('text'), text: z.string() });
const thinking = z.object({ type: z.literal('thinking'), thinking: z.string() });
/** Encrypted reasoning: nothing to show; its tokens are in usage. Only Claude Code documents it. */
const redactedThinking = z.object({ type: z.literal('redacted_thinking') });
const toolUse = z.object({ type: z.literal('tool_use'), id, name: z.string().min(1), input: AnyJsonObject });

/** The block types Claude Code documents; Qwen Code and Amp print all but redacted_thinking (it stays unknown there). */
export const ClaudeCodeBlock = z.discriminatedUnion('type', [text, thinking, redactedThinking, toolUse]);
export const CompatibleBlock = z.discriminatedUnion('type', [text, thinking, toolUse]);
export type AssistantBlock = z.infer<typeof ClaudeCodeBlock>;

/** A user message's tool_result block; `is_error` absent means success (Anthropic Messages API). */
export const ToolResultBlock = z.object({ type: z.literal('tool_result'), tool_use_id: id, is_error: z.boolean().optional(), content: z.unknown().optional() });

/** A tool_use block: what a translator pairs with its result. `block` is the raw block, for `unknown` fallbacks. */
export interface ToolUse {
  id: string;
  name: string;
  input: JsonObject;
  block: JsonObject;
}

export interface ToolUseSink {
  /** A tool call opened; the translator pairs it with its result and pushes what that yields. */
  toolUse(call: ToolUse, out: DraftEvent[]): void;
}

/** A readable tool_result block: the call it answers, its verdict and content, and the raw block. */
export interface ToolResult {
  id: string;
  isError: boolean;
  content: unknown;
  block: JsonObject;
}

export interface ToolResultSink<C> {
  /** A tool result arrived (`context`: what the caller passed along, e.g. the record it came in). */
  toolResult(result: ToolResult, out: DraftEvent[], context: C): void;
}

const isToolResultBlock = compileSchema(ToolResultBlock);

/**
 * Reads the tool_result blocks of one user message's content into `out`: each readable one goes to the sink (which
 * pairs it with its call); one that fails the schema is `unknown` with the raw block (its call, if any, stays
 * pending and is reported without an outcome). Other blocks are prompt echoes, subagent prompts, notices: skipped.
 */
export function readToolResults<C>(content: readonly unknown[], out: DraftEvent[], sink: ToolResultSink<C>, context: C): void {
  for (const raw of content) {
    if ((raw as JsonObject | null)?.type !== 'tool_result') continue;
    if (!isToolResultBlock(raw)) {
      out.push(unknownValue(raw));
      continue;
    }
    sink.toolResult({ id: raw.tool_use_id, isError: raw.is_error ?? false, content: raw.content, block: raw }, out, context);
  }
}

/**
 * Reads one assistant message's content into `out`, for a harness whose block types are `schema`: text -> agent,
 * thinking -> reasoning (empty ones say nothing), redacted_thinking -> nothing, tool_use -> the sink. A block that
 * fails the schema (a non-string text, a type the harness does not document, not an object) is `unknown` with the
 * raw block: never dropped, never defaulted.
 */
export function assistantContentReader(schema: typeof ClaudeCodeBlock | typeof CompatibleBlock): (content: readonly unknown[], out: DraftEvent[], sink: ToolUseSink) => void {
  // A guard compiled from the schema (zod's verdicts without its copies): this runs for every block on the hot path.
  const isBlock = compileSchema(schema as typeof ClaudeCodeBlock);
  return (content, out, sink) => {
    for (const raw of content) {
      if (!isBlock(raw)) {
        out.push(unknownValue(raw));
        continue;
      }
      if (raw.type === 'text') {
        if (raw.text.length > 0) out.push({ type: 'agent', message: raw.text });
      } else if (raw.type === 'thinking') {
        if (raw.thinking.length > 0) out.push({ type: 'reasoning', message: raw.thinking });
      } else if (raw.type === 'tool_use') {
        sink.toolUse({ id: raw.id, name: raw.name, input: raw.input, block: raw }, out);
      }
    }
  };
}

/**
 * The text of a tool result's content (a string, or its blocks' texts joined by newlines; undefined when it has
 * none), or `unreadable` when the content is neither or a text block's `text` is not a string: a verdict read from
 * that text (Qwen Code's "Background agent launched") would rest on what nobody could read.
 */
export function resultText(content: unknown): string | undefined | 'unreadable' {
  if (content === undefined || typeof content === 'string') return content;
  if (!Array.isArray(content)) return 'unreadable';
  let joined: string | undefined;
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    // Any block's string text counts (as contentText reads it); a text block without one is unreadable.
    const piece = (block as JsonObject).text;
    if (typeof piece === 'string') joined = joined === undefined ? piece : `${joined}\n${piece}`;
    else if ((block as JsonObject).type === 'text') return 'unreadable';
  }
  return joined;
}
