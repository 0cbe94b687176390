// gg in the harness registry: a built-in descriptor instead of a harness.toml. Nothing is installed (gg's entry
// point runs on the driver's own Node), and the key, stub wire and id family follow the provider its model id
// names. This is gg's one auth table; it imports no AI SDK, so the dispatcher, `tcab harnesses status` and the
// translator read it without loading a model client.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessManifest } from '../../shared/manifest.ts';
import type { StubScriptInput } from '../../shared/stub-script.ts';

export const GG_VERSION = '0.1.0';
export const GG_DIR = dirname(fileURLToPath(import.meta.url));
export const GG_MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

export type GgProvider = 'anthropic' | 'openai' | 'openai-compatible';

/** What a model id's form selects (model.ts builds the client from the same answer). */
export function providerFor(model: string): { provider: GgProvider; modelId: string } {
  if (model.startsWith('anthropic/')) return { provider: 'anthropic', modelId: model.slice('anthropic/'.length) };
  if (model.startsWith('claude-')) return { provider: 'anthropic', modelId: model };
  if (model.startsWith('openai/')) return { provider: 'openai', modelId: model.slice('openai/'.length) };
  if (/^(gpt-|o\d)/.test(model)) return { provider: 'openai', modelId: model };
  return { provider: 'openai-compatible', modelId: model.replace(/^openrouter\//, '') };
}

/**
 * Per provider: the variable its key is exported under, the stub's wire, how bare ids name models, and the model
 * gateway's provider for that key (model.ts appends /v1 to a base URL, the stub's and the gateway's alike:
 * /v1/messages, /v1/responses, /v1/chat/completions).
 */
const PROVIDERS = {
  anthropic: { keyVar: 'ANTHROPIC_API_KEY', stubWire: 'anthropic-messages', bareIds: 'anthropic', gateway: 'anthropic' },
  openai: { keyVar: 'OPENAI_API_KEY', stubWire: 'openai-responses', bareIds: 'openai', gateway: 'openai' },
  'openai-compatible': { keyVar: 'OPENROUTER_API_KEY', stubWire: 'openai-chat', bareIds: 'mixed', gateway: 'openrouter' },
} as const satisfies Record<GgProvider, { keyVar: string; stubWire: HarnessManifest['stub_wire']; bareIds: HarnessManifest['model_ids']; gateway: string }>;

export function keyVariableFor(model: string): string {
  return PROVIDERS[providerFor(model).provider].keyVar;
}

// The offline demo's conversation in gg's own tool names (the wires' default scripts speak Claude Code's and
// Codex's tools, which gg does not have).
const STUB_SCRIPT: StubScriptInput = {
  steps: [
    {
      thinking: 'The task wants a file named hello.txt; a shell command can create and show it in one go.',
      text: 'I will create hello.txt and show its content.',
      tool: { name: 'shell', args: { command: "printf 'hello\\n' > hello.txt && cat hello.txt" } },
    },
    { tool: { name: 'read_file', args: { path: 'hello.txt' } } },
    { text: 'Created hello.txt containing "hello".' },
  ],
};

/**
 * gg's manifest. With a model: the run's (one provider's key, that provider's stub wire). Without: what any model
 * needs, for listings and readiness (any provider's key makes gg available for that provider's models).
 */
export function ggManifest(model?: string): HarnessManifest {
  const chosen = model === undefined ? undefined : PROVIDERS[providerFor(model).provider];
  const prefixed = model !== undefined && model.includes('/');
  return HarnessManifest.parse({
    slug: 'gg',
    name: 'gg',
    strategy: 'structured',
    binary: 'gg',
    docs_url: 'https://tcab.dev/docs/gg',
    min_supported: GG_VERSION,
    latest_validated: GG_VERSION,
    builtin: { entry: GG_MAIN },
    // argv[0] stands for the driver's Node, as for every binary the driver starts.
    version_command: ['gg', GG_MAIN, '--version'],
    version_pattern: '(\\d+\\.\\d+\\.\\d+)',
    auth: {
      modes: ['api-key'],
      api_key: { host_vars: chosen ? [chosen.keyVar] : Object.values(PROVIDERS).map((p) => p.keyVar), inject_as: 'TCAB_GG_API_KEY' },
    },
    gateway: { providers: Object.fromEntries((chosen ? [chosen] : Object.values(PROVIDERS)).map((p) => [p.keyVar, p.gateway])) },
    model_ids: chosen && !prefixed ? chosen.bareIds : 'mixed',
    stub_wire: (chosen ?? PROVIDERS.anthropic).stubWire,
    stub_script: STUB_SCRIPT,
  });
}
