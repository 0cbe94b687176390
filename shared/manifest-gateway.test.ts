// Every harness says where its API key goes (issue 34): a `gateway` section in each manifest with [auth.api_key],
// naming only providers the gateway has, and for each provider a base URL the adapter hands the CLI that, with the
// path the CLI was recorded calling on the stub (shared/reference/harnesses.md, "ran it here"), is a path the
// gateway serves, metered in the wire the harness speaks to the stub.
import { describe, expect, it } from 'vitest';
import { compileProviders, DEFAULT_PROVIDERS, routeOf } from '../gateway/providers.ts';
import { ggManifest } from '../harnesses/gg/descriptor.ts';
import { listHarnesses, loadAdapter } from '../harnesses/registry.ts';
import { keyRoutesOf } from './gateway-route.ts';
import type { HarnessManifest } from './manifest.ts';

const PROVIDERS = compileProviders(DEFAULT_PROVIDERS);
const manifests: HarnessManifest[] = [...listHarnesses().map((h) => h.manifest), ggManifest('claude-sonnet-4-5'), ggManifest('gpt-5'), ggManifest('openrouter/anthropic/claude-sonnet-4.5')];

/** The model each harness's scenarios use, and what the CLI appends to the base URL its adapter gives it (recorded on the stub). */
const CALLS: Record<string, { model: string; appends: string }> = {
  claude: { model: 'claude-sonnet-4-5', appends: '/v1/messages' },
  codex: { model: 'gpt-5.5', appends: '/responses' },
  gemini: { model: 'gemini-2.5-pro', appends: '/v1beta/models/gemini-2.5-pro:streamGenerateContent' },
  qwen: { model: 'qwen3-coder-plus', appends: '/chat/completions' },
  opencode: { model: 'mock-model', appends: '/chat/completions' },
  kilo: { model: 'mock-model', appends: '/chat/completions' },
  cline: { model: 'mock-model', appends: '/chat/completions' },
  copilot: { model: 'mock-model', appends: '/chat/completions' },
  aider: { model: 'openrouter/mock-model', appends: '/chat/completions' },
  pi: { model: 'mock-model', appends: '/chat/completions' },
  kimi: { model: 'mock-model', appends: '/chat/completions' },
  vibe: { model: 'mock-model', appends: '/chat/completions' },
  grok: { model: 'mock-model', appends: '/chat/completions' },
  openhands: { model: 'openrouter/mock-model', appends: '/chat/completions' },
};
/** gg's adapter passes the base URL as is; its model client (harnesses/gg/model.ts) appends /v1 and the wire's path. */
const GG_APPENDS: Record<string, string> = { 'anthropic-messages': '/v1/messages', 'openai-responses': '/v1/responses', 'openai-chat': '/v1/chat/completions' };
/** The stub's wire names -> the gateway's metering protocols. */
const PROTOCOL_OF_WIRE: Record<string, string> = { 'anthropic-messages': 'anthropic', 'openai-responses': 'openai-responses', 'openai-chat': 'openai-chat', gemini: 'gemini' };

const GATEWAY = 'http://gateway.test';

describe('every harness says where its API key goes', () => {
  it.each(manifests.filter((m) => m.auth.api_key).map((m) => [m.slug, m] as const))('%s has a gateway section covering each key variable', (_slug, m) => {
    // Exactly one of the two forms: providers naming every key variable, or the reason the key stays in the harness.
    expect(m.gateway && ('providers' in m.gateway ? Object.keys(m.gateway.providers).sort() : 'key_in_harness'), `${m.slug}: add a [gateway] section (providers, or key_in_harness with the reason)`).toEqual(
      m.gateway && 'providers' in m.gateway ? [...m.auth.api_key!.host_vars].sort() : 'key_in_harness',
    );
    const routes = keyRoutesOf(m)!;
    if ('gateway' in routes) {
      for (const provider of routes.gateway) expect(PROVIDERS.has(provider), `${m.slug}: "${provider}" is not in gateway/providers.ts DEFAULT_PROVIDERS`).toBe(true);
      // The driver already reaches a harness's base URL only where the stub does: a gateway route needs a stub wire.
      expect(Object.keys(PROTOCOL_OF_WIRE), `${m.slug}: a gateway route needs a base URL the stub proves, in a wire the gateway meters`).toContain(m.stub_wire);
    } else {
      expect(routes.keyInHarness.length).toBeGreaterThan(20);
    }
  });

  it('the gateway names a provider for every key gg can use, one per model provider', () => {
    expect(keyRoutesOf(ggManifest())).toEqual({ gateway: ['anthropic', 'openai', 'openrouter'] });
  });

  // gg's listing manifest (every provider's key, one stub wire) is no run's: its runs' manifests are checked instead.
  const routed = manifests.filter((m) => m.gateway && 'providers' in m.gateway && !(m.builtin && m.auth.api_key!.host_vars.length > 1));
  it.each(routed.flatMap((m) => [...new Set(Object.values((m.gateway as { providers: Record<string, string> }).providers))].map((p) => [m.slug, m.stub_wire ?? '', p, m] as const)))(
    '%s (%s) through /p/%s: the adapter\'s base URL plus the recorded path is served and metered in its wire',
    async (slug, wire, provider, m) => {
      const call = m.builtin ? { model: 'any', appends: GG_APPENDS[wire]! } : CALLS[slug];
      expect(call, `${slug}: say in CALLS what the CLI appends to its base URL`).toMatchObject({ model: expect.any(String), appends: expect.stringMatching(/^\//) });
      const base = `${GATEWAY}/p/${provider}`;
      const adapter = await loadAdapter(slug);
      const invocation = adapter.invocation({ model: call!.model, prompt: 'p', workdir: '/w', home: '/h', baseUrl: base, authMode: 'api-key' });
      const written = [...Object.values(invocation.env), ...invocation.files.map((f) => f.content)].join('\n');
      const given = new RegExp(`${GATEWAY.replaceAll('.', '\\.')}/p/${provider}[^"'\\s]*`).exec(written)?.[0];
      expect(given, `${slug}: the adapter writes the base URL somewhere the CLI reads`).toMatch(new RegExp(`^${GATEWAY.replaceAll('.', '\\.')}/p/${provider}`));
      const path = `${given}${call!.appends}`.slice(base.length);
      expect(routeOf(PROVIDERS.get(provider)!, path)?.protocol, `${slug}: ${path} on ${provider}`).toBe(PROTOCOL_OF_WIRE[wire]);
    },
  );
});
