// Anthropic Messages API usage (docs.anthropic.com/en/api/messages, /en/docs/build-with-claude/streaming).
// A JSON body has `usage` and `model` at its top. A stream has them in `message_start` (`message.usage`: input and
// cache counts, and an initial output count that is not final) and in `message_delta` (`usage`: the cumulative
// output_tokens, and in newer streams the input and cache counts again): every field takes its last reported
// value, never a sum (the cache counts count 0 when absent once input_tokens was given: servers that do not
// cache leave them out). `input_tokens` already excludes the cache, so nothing is subtracted; thinking is inside
// `output_tokens` with no count of its own, so reasoning is not a class this wire reports (as for Claude Code).
import type { UsageShape } from '../../shared/usage.ts';
import type { JsonPath } from './json-scan.ts';
import type { BodyEnd, WireReader } from './reader.ts';
import { given, isObject, readCount, readModel, reportTokens, reportsAny } from './reader.ts';

export const ANTHROPIC_WIRE_USAGE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'usage (body, message_delta) / message.usage (message_start), last value per field: input_tokens -> input (already ' +
    'uncached), cache_read_input_tokens -> cache_read, cache_creation_input_tokens -> cache_write, output_tokens -> ' +
    "output (thinking included; message_start's is not final). No reasoning count.",
};

const FIELDS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
type Field = (typeof FIELDS)[number];

const PATHS: JsonPath[] = [['usage'], ['message', 'usage'], ['model'], ['message', 'model']];
const USAGE = 0;
const START_USAGE = 1;

export function anthropicReader(): WireReader {
  const last: Partial<Record<Field, number | null>> = {};
  let reported = false;
  /** A final usage (the body's, or a message_delta's) reported output_tokens. */
  let outputFinal = false;
  let model: string | undefined;
  return {
    paths: PATHS,
    value(path, value) {
      if (path === USAGE || path === START_USAGE) {
        if (!isObject(value) || !reportsAny(value, FIELDS)) return;
        reported = true;
        for (const field of FIELDS) {
          const count = readCount(value[field]);
          if (count !== undefined) last[field] = count;
        }
        if (path === USAGE && readCount(value.output_tokens) !== undefined) outputFinal = true;
        return;
      }
      model = readModel(value) ?? model;
    },
    done() {},
    chunkEnd() {},
    finish(_body: BodyEnd) {
      // The cache counts are the prompt's breakdown: 0 when absent once input_tokens was given, unknown before.
      const prompt = last.input_tokens;
      const tokens = reported
        ? reportTokens(
            ANTHROPIC_WIRE_USAGE,
            { input: given(prompt, prompt), output: given(last.output_tokens, last.output_tokens), cache_read: given(prompt, last.cache_read_input_tokens), cache_write: given(prompt, last.cache_creation_input_tokens) },
            outputFinal,
          )
        : null;
      return { tokens, model: model ?? null };
    },
  };
}
