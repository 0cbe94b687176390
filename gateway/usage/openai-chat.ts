// OpenAI Chat Completions usage (platform.openai.com/docs/api-reference/chat/object#chat/object-usage), also what
// OpenAI-compatible servers send (OpenRouter, DashScope, DeepSeek, vLLM). A JSON body has `usage` and `model` at
// its top. A stream has usage only when the request asked for it (`stream_options.include_usage`): in a last
// chunk with empty `choices` (some servers put a cumulative `usage` in every chunk: the last one counts); without
// it the stream reports no tokens. prompt_tokens INCLUDES the cached tokens (`prompt_tokens_details.cached_tokens`,
// else DeepSeek's `prompt_cache_hit_tokens`), completion_tokens INCLUDES `completion_tokens_details.reasoning_tokens`.
// Extras such as OpenRouter's `cost` are ignored. No cache-write count.
import type { UsageShape } from '../../shared/usage.ts';
import { ITEM } from './json-scan.ts';
import type { JsonPath } from './json-scan.ts';
import type { BodyEnd, WireReader } from './reader.ts';
import { CumulativeUsage, isObject, openaiTokens, readCount, readModel, readNestedCount, reportsAny } from './reader.ts';

export const OPENAI_CHAT_WIRE_USAGE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'usage (body, or the last chunk that has one): prompt_tokens - prompt_tokens_details.cached_tokens (else ' +
    'prompt_cache_hit_tokens) -> input, that cached count -> cache_read, completion_tokens -> output (reasoning ' +
    'included), completion_tokens_details.reasoning_tokens -> reasoning. No cache write; cost ignored.',
};

const PATHS: JsonPath[] = [['usage'], ['model'], ['choices', ITEM, 'finish_reason']];
const USAGE = 0;
const MODEL = 1;

export function openaiChatReader(): WireReader {
  const reports = new CumulativeUsage();
  let model: string | undefined;
  /** The stream said [DONE]: it ended whole, so its last usage is final. */
  let done = false;
  return {
    paths: PATHS,
    value(path, value) {
      if (path === USAGE) {
        if (isObject(value) && reportsAny(value, ['prompt_tokens', 'completion_tokens'])) reports.usage(value);
      } else if (path === MODEL) {
        model = readModel(value) ?? model;
      } else if (typeof value === 'string') {
        reports.finished();
      }
    },
    done() {
      done = true;
    },
    chunkEnd: () => reports.chunkEnd(),
    finish(body: BodyEnd) {
      reports.chunkEnd();
      const usage = reports.last;
      if (usage === undefined) return { tokens: null, model: model ?? null };
      const prompt = readCount(usage.prompt_tokens);
      let cached = readNestedCount(usage, 'prompt_tokens_details', 'cached_tokens');
      if (cached === undefined) cached = readCount(usage.prompt_cache_hit_tokens);
      const output = readCount(usage.completion_tokens);
      const reasoning = readNestedCount(usage, 'completion_tokens_details', 'reasoning_tokens');
      // A body is final; a stream's usage is once a choice finished at or before its chunk, or at [DONE].
      const tokens = openaiTokens(OPENAI_CHAT_WIRE_USAGE, { prompt, cached, output, reasoning }, reports.lastFinal || done || body.form === 'json');
      return { tokens, model: model ?? null };
    },
  };
}
