// OpenAI Responses API usage (platform.openai.com/docs/api-reference/responses/object#responses/object-usage).
// A JSON body has `usage` and `model` at its top; a stream has them in `response.usage` / `response.model` of its
// events, the usage only in the terminal one (`response.completed`, or `response.incomplete` / `response.failed`),
// so a stream cut before it reports no tokens. OpenAI semantics: input_tokens INCLUDES the cached tokens
// (subtracted for `input`), output_tokens INCLUDES the reasoning tokens (a breakdown). No cache-write count.
import type { UsageShape } from '../../shared/usage.ts';
import type { JsonPath } from './json-scan.ts';
import type { Json, WireReader } from './reader.ts';
import { isObject, openaiTokens, readCount, readModel, readNestedCount, reportsAny } from './reader.ts';

export const OPENAI_RESPONSES_WIRE_USAGE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'usage (body) / response.usage (response.completed, .incomplete, .failed): input_tokens - ' +
    'input_tokens_details.cached_tokens -> input, input_tokens_details.cached_tokens -> cache_read, output_tokens -> ' +
    'output (reasoning included), output_tokens_details.reasoning_tokens -> reasoning. No cache write.',
};

const PATHS: JsonPath[] = [['usage'], ['response', 'usage'], ['model'], ['response', 'model']];

export function openaiResponsesReader(): WireReader {
  let usage: Json | undefined;
  let model: string | undefined;
  return {
    paths: PATHS,
    value(path, value) {
      if (path <= 1) {
        if (isObject(value) && reportsAny(value, ['input_tokens', 'output_tokens'])) usage = value;
        return;
      }
      model = readModel(value) ?? model;
    },
    done() {},
    chunkEnd() {},
    finish() {
      if (usage === undefined) return { tokens: null, model: model ?? null };
      const prompt = readCount(usage.input_tokens);
      const cached = readNestedCount(usage, 'input_tokens_details', 'cached_tokens');
      const output = readCount(usage.output_tokens);
      const reasoning = readNestedCount(usage, 'output_tokens_details', 'reasoning_tokens');
      const tokens = openaiTokens(OPENAI_RESPONSES_WIRE_USAGE, { prompt, cached, output, reasoning }, true);
      return { tokens, model: model ?? null };
    },
  };
}
