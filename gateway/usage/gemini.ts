// Gemini API usage (ai.google.dev/api/generate-content#UsageMetadata): `usageMetadata` and `modelVersion` at the
// top of a generateContent body, of every streamGenerateContent chunk (SSE with alt=sse, else one JSON array of
// chunks); in a stream the counts are cumulative and the last chunk's are the response's. Counts of 0 are left
// out (proto3 JSON), so an absent count is 0. promptTokenCount INCLUDES cachedContentTokenCount;
// toolUsePromptTokenCount (the results of built-in tools fed back to the model) is prompt input counted apart;
// candidatesTokenCount EXCLUDES thoughtsTokenCount. As harnesses/gemini maps Gemini CLI's stats: output =
// candidates + thoughts, reasoning = thoughts (here read from thoughtsTokenCount, not derived from the total).
import type { UsageShape } from '../../shared/usage.ts';
import { minus } from '../../shared/translate/token-counts.ts';
import { ITEM } from './json-scan.ts';
import type { JsonPath } from './json-scan.ts';
import type { BodyEnd, WireReader } from './reader.ts';
import { CumulativeUsage, isObject, plus, readCount, readModel, reportTokens, reportsAny } from './reader.ts';

export const GEMINI_WIRE_USAGE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'usageMetadata (the last chunk with one): promptTokenCount - cachedContentTokenCount + toolUsePromptTokenCount -> ' +
    'input, cachedContentTokenCount -> cache_read, candidatesTokenCount + thoughtsTokenCount -> output, ' +
    'thoughtsTokenCount -> reasoning; an absent count is 0 (proto3). No cache write.',
};

const COUNTS = ['promptTokenCount', 'cachedContentTokenCount', 'toolUsePromptTokenCount', 'candidatesTokenCount', 'thoughtsTokenCount'];

// The same four paths in a body or SSE chunk, and in each element of the streamed JSON array.
const CHUNK_PATHS: JsonPath[] = [['usageMetadata'], ['modelVersion'], ['candidates', ITEM, 'finishReason'], ['promptFeedback', 'blockReason']];
const PATHS: JsonPath[] = [...CHUNK_PATHS, ...CHUNK_PATHS.map((path): JsonPath => [ITEM, ...path])];
const USAGE = 0;
const MODEL = 1;

export function geminiReader(): WireReader {
  const reports = new CumulativeUsage();
  let model: string | undefined;
  return {
    paths: PATHS,
    value(path, value) {
      const kind = path % CHUNK_PATHS.length;
      if (kind === USAGE) {
        if (isObject(value) && reportsAny(value, COUNTS)) reports.usage(value);
      } else if (kind === MODEL) {
        model = readModel(value) ?? model;
      } else if (typeof value === 'string') {
        reports.finished(); // a candidate's finishReason, or the prompt's blockReason
      }
    },
    done() {},
    chunkEnd: () => reports.chunkEnd(),
    finish(body: BodyEnd) {
      reports.chunkEnd();
      const usage = reports.last;
      if (usage === undefined) return { tokens: null, model: model ?? null };
      const cached = readCount(usage.cachedContentTokenCount);
      const thoughts = readCount(usage.thoughtsTokenCount);
      const tokens = reportTokens(
        GEMINI_WIRE_USAGE,
        {
          input: plus(minus(readCount(usage.promptTokenCount), cached), readCount(usage.toolUsePromptTokenCount)),
          cache_read: cached,
          output: plus(readCount(usage.candidatesTokenCount), thoughts),
          reasoning: thoughts,
        },
        // A generateContent body is final; a stream's counts are at a finish in their chunk or before, or when the
        // streamed array closed (the stream ended whole).
        reports.lastFinal || (body.form === 'json' && (body.top === 'object' || body.complete)),
      );
      return { tokens, model: model ?? null };
    },
  };
}
