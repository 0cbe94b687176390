import { describe, expect, it } from 'vitest';
import { getHarness, manifestForModel } from '../../harnesses/registry.ts';
import { runTargetOf, wireModelsOf } from './run-provider.ts';

const manifest = (slug: string, model: string) => manifestForModel(getHarness(slug), model);

describe('wireModelsOf', () => {
  it.each([
    ['a plain id: itself', 'claude-sonnet-4-5', ['claude-sonnet-4-5']],
    ['a prefixed id: itself and the id after the prefix', 'anthropic/claude-sonnet-4-5', ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5']],
    ['several prefixes: the part after the last /', 'openrouter/qwen/qwen3-coder', ['openrouter/qwen/qwen3-coder', 'qwen3-coder']],
    ['a trailing / names no model after it: itself only', 'odd/', ['odd/']],
  ])('%s', (_name, model, expected) => {
    expect(wireModelsOf(model)).toEqual(expected);
  });
});

describe('runTargetOf', () => {
  it.each([
    ['claude with its API key: anthropic', 'claude', 'claude-sonnet-4-5', 'ANTHROPIC_API_KEY', { providers: ['anthropic'], models: ['claude-sonnet-4-5'] }],
    ['the per-harness override goes where the first host variable goes', 'claude', 'claude-sonnet-4-5', 'TCAB_API_KEY_CLAUDE', { providers: ['anthropic'], models: ['claude-sonnet-4-5'] }],
    ['opencode, prefixed model: openrouter, both ids', 'opencode', 'anthropic/claude-sonnet-4-5', 'OPENROUTER_API_KEY', { providers: ['openrouter'], models: ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5'] }],
    ['qwen with the OpenAI key: openai only', 'qwen', 'qwen3-coder-plus', 'OPENAI_API_KEY', { providers: ['openai'], models: ['qwen3-coder-plus'] }],
    ['key not resolved: every provider its keys can go to', 'qwen', 'qwen3-coder-plus', undefined, { providers: ['dashscope', 'openai'], models: ['qwen3-coder-plus'] }],
    ['a key that stays in the harness: not through the gateway, never held', 'amp', 'smart', 'AMP_API_KEY', undefined],
  ])('%s', (_name, slug, model, keyVariable, expected) => {
    expect(runTargetOf(manifest(slug, model), model, keyVariable)).toEqual(expected);
  });
});
