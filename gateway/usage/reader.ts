// What every wire's usage reader shares: the contract the meter drives, and reading counts the way the harness
// translators do (shared/translate/token-counts.ts), so the gateway's numbers and theirs are comparable.
//
// Reading rules, the same for every wire:
// - A usage object is a report only when it holds at least one of the wire's count fields; `usage: null` (OpenAI
//   before the end of a stream), `{}` or an object of other keys (OpenRouter's `cost`) report nothing.
// - A count is a non-negative safe integer. Any other value (a string, a fraction, a negative number) is
//   unreadable: every class computed from it is null, never 0. JSON null is an absent count (the providers'
//   schemas declare some nullable: Anthropic's cache counts, vLLM's `prompt_tokens_details`).
// - A total (the prompt's, the output's) that the report does not give leaves the classes on its side null: a
//   usage without prompt_tokens says nothing of the prompt. An absent breakdown (cached, reasoning, Anthropic's
//   cache counts) counts 0 once its total is given, as `shapeTokens` counts a missing number for a class the
//   harness reports. Gemini is the exception: its proto3 JSON leaves every 0 out, so any absent count is 0.
// - A breakdown larger than its total (cached > prompt) leaves the difference at 0 (`minus`), as the translators do.
import type { TokenClass, TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TOKEN_CLASSES } from '../../shared/usage.ts';
import { minus, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';
import type { JsonPath } from './json-scan.ts';

/** How the body arrived, as the meter saw it at its end. */
export interface BodyEnd {
  /** `json`: one JSON value (an object, or Gemini's streamed array); `sse`: text/event-stream; `empty`: no body. */
  form: 'json' | 'sse' | 'empty';
  /** For `json`: the top-level value is an object or an array. */
  top: 'object' | 'array' | 'scalar' | null;
  /** For `json`: the top-level value ended (the body was not cut). */
  complete: boolean;
}

/** A wire's usage reader: the paths it wants, the values found there, and the classes at the end. */
export interface WireReader {
  /** Paths in a JSON body or in one SSE event's data. */
  readonly paths: readonly JsonPath[];
  /** A value found whole at `paths[path]`, in body order. */
  value(path: number, value: unknown): void;
  /** An SSE event whose data is `[DONE]` (OpenAI Chat Completions' end of stream). */
  done(): void;
  /** A chunk ended: an SSE event, or an element of a streamed JSON array. `finish` ends the last one itself. */
  chunkEnd(): void;
  /** The tokens the response reported (null: none) and the model it named. */
  finish(body: BodyEnd): { tokens: TokenUsage | null; model: string | null };
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A count as a provider wrote it: the number; undefined when absent or null; null when unreadable. */
export function readCount(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** A count inside a details object (`prompt_tokens_details.cached_tokens`): an absent or null object reports none. */
export function readNestedCount(parent: Json, object: string, field: string): number | null | undefined {
  const details = parent[object];
  if (details === undefined || details === null) return undefined;
  if (!isObject(details)) return null;
  return readCount(details[field]);
}

/** Whether a usage object reports anything: at least one of the wire's count fields is present. */
export function reportsAny(usage: Json, fields: readonly string[]): boolean {
  return fields.some((field) => usage[field] !== undefined && usage[field] !== null);
}

/** `value` when the report gave its side's total, else null (unknown, not 0). */
export function given<T>(total: number | null | undefined, value: T): T | null {
  return total === undefined ? null : value;
}

/** a + b, or null when either is unreadable; undefined (absent) counts 0 unless both are absent. */
export function plus(a: number | null | undefined, b: number | null | undefined): number | null | undefined {
  if (a === null || b === null) return null;
  if (a === undefined && b === undefined) return undefined;
  return (a ?? 0) + (b ?? 0);
}

/**
 * The classes of a report: the shape's classes from `values` (absent counts 0, unreadable null, as the translators
 * shape theirs), then `output` and `reasoning` null when the report is not the response's final one (a stream cut
 * before its last usage), and any sum past the safe integers null.
 */
export function reportTokens(shape: UsageShape, values: ClassValues, outputFinal: boolean): TokenUsage {
  const tokens: Record<TokenClass, number | null> = { ...shapeReadTokens(shape, values) };
  if (!outputFinal) {
    tokens.output = null;
    tokens.reasoning = null;
  }
  for (const cls of TOKEN_CLASSES) if (tokens[cls] !== null && !Number.isSafeInteger(tokens[cls])) tokens[cls] = null;
  return tokens;
}

/**
 * The classes of an OpenAI report (Chat Completions and Responses alike): its prompt total INCLUDES the cached
 * tokens (subtracted for `input`), its output total INCLUDES the reasoning tokens (a breakdown).
 */
export function openaiTokens(shape: UsageShape, counts: Record<'prompt' | 'cached' | 'output' | 'reasoning', number | null | undefined>, outputFinal: boolean): TokenUsage {
  const { prompt, cached, output, reasoning } = counts;
  return reportTokens(
    shape,
    { input: given(prompt, minus(prompt, cached)), cache_read: given(prompt, cached), output: given(output, output), reasoning: given(output, reasoning) },
    outputFinal,
  );
}

/** Longest model name kept: provider model ids are short; anything longer is not a model name. */
export const MAX_MODEL_CHARS = 256;

/** A model name as the response gives it, or undefined when it is not a plausible one. */
export function readModel(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_MODEL_CHARS ? value : undefined;
}

/**
 * The last usage of a stream whose chunks each carry cumulative counts (Gemini; Chat Completions servers that put
 * usage in every chunk), and whether it is final: it is when its chunk, or an earlier one, finished (a
 * finishReason / finish_reason), so a chunk cut before its usage arrived never lends its finish to the previous
 * chunk's smaller counts.
 */
export class CumulativeUsage {
  private pending: Json | undefined;
  private pendingFinished = false;
  private finishedBefore = false;
  /** The last usage of a chunk that ended (or was cut after it arrived whole). */
  last: Json | undefined;
  /** A finish was seen in the chunk of `last`, or before it. */
  lastFinal = false;

  usage(value: Json): void {
    this.pending = value;
  }

  finished(): void {
    this.pendingFinished = true;
  }

  chunkEnd(): void {
    if (this.pendingFinished) this.finishedBefore = true;
    if (this.pending !== undefined) {
      this.last = this.pending;
      this.lastFinal = this.finishedBefore;
    }
    this.pending = undefined;
    this.pendingFinished = false;
  }
}
