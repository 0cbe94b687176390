// gg's model client: the model id is opaque; its form picks the provider through the Vercel AI SDK.
//   claude-* | anthropic/<model>      -> Anthropic Messages API
//   gpt-* | o<digit>* | openai/<model> -> OpenAI (Responses API)
//   openrouter/<vendor>/<model> | anything else with a '/' -> OpenAI-compatible Chat Completions (OpenRouter by
//   default, or the configured base URL)
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { providerFor } from './descriptor.ts';

export function languageModel(model: string, apiKey: string, baseUrl?: string): LanguageModel {
  const { provider, modelId } = providerFor(model);
  const base = baseUrl?.replace(/\/$/, '');
  switch (provider) {
    case 'anthropic':
      return createAnthropic({ apiKey, ...(base ? { baseURL: `${base}/v1` } : {}) })(modelId);
    case 'openai':
      return createOpenAI({ apiKey, ...(base ? { baseURL: `${base}/v1` } : {}) }).responses(modelId);
    case 'openai-compatible':
      return createOpenAICompatible({ name: 'openrouter', apiKey, baseURL: base ? `${base}/v1` : 'https://openrouter.ai/api/v1', includeUsage: true })(modelId);
  }
}
