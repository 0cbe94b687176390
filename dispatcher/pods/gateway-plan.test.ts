// Which way a claimed Run's key goes (issue 34), as a table over the real harness manifests: the variable the token
// goes in is the one the claim's own auth resolution picked from the configured Secrets.
import { describe, expect, it } from 'vitest';
import { getHarness } from '../../harnesses/registry.ts';
import { RunSpec } from '../../shared/run.ts';
import { apiKeyOverrideVariable } from '../../shared/auth.ts';
import { dispatcherConfig } from '../config.ts';
import type { ApiKeySecretRef } from '../config.ts';
import { clusterAvailability } from './availability.ts';
import { NO_GATEWAY, SUBSCRIPTION_AUTH, planGateway } from './gateway-plan.ts';
import type { GatewayPlan } from './gateway-plan.ts';

const key = (env: string): ApiKeySecretRef => ({ env, secret: 'provider-keys', key: env.toLowerCase() });

/** The plan the claim pass makes: auth resolved from configuration and Secret names, then the key's way. */
function plan(harness: string, keys: string[], options: { gateway?: boolean; subscription?: boolean; authMode?: 'api-key' | 'subscription'; driverEnv?: Record<string, string> } = {}): GatewayPlan {
  const manifest = getHarness(harness).manifest;
  const config = dispatcherConfig({ TCAB_API_KEY_SECRETS: JSON.stringify(keys.map(key)), TCAB_SUBSCRIPTION_SECRETS: JSON.stringify(options.subscription ? { [harness]: 'sub' } : {}) });
  const spec = RunSpec.parse({ harness, model: 'm', prompt: 'p', ...(options.authMode ? { authMode: options.authMode } : {}) });
  const resolution = clusterAvailability(manifest.auth, spec, config, new Set(['provider-keys', 'sub']), options.driverEnv ?? {});
  return planGateway({ manifest, resolution, apiKeySecrets: config.TCAB_API_KEY_SECRETS, gatewayConfigured: options.gateway ?? true });
}

describe('planGateway', () => {
  it.each<[string, string, string[], { keyVar: string; provider: string }]>([
    ['claude: its key variable', 'claude', ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'], { keyVar: 'ANTHROPIC_API_KEY', provider: 'anthropic' }],
    ['codex: OpenAI', 'codex', ['OPENAI_API_KEY'], { keyVar: 'OPENAI_API_KEY', provider: 'openai' }],
    ['gemini: the first configured of its variables', 'gemini', ['GOOGLE_API_KEY'], { keyVar: 'GOOGLE_API_KEY', provider: 'google' }],
    ['gemini: GEMINI_API_KEY before GOOGLE_API_KEY (host_vars order)', 'gemini', ['GOOGLE_API_KEY', 'GEMINI_API_KEY'], { keyVar: 'GEMINI_API_KEY', provider: 'google' }],
  ])('%s goes through the gateway', (_, harness, keys, want) => {
    expect(plan(harness, keys)).toEqual({ gateway: want });
  });

  it.each<[string, () => GatewayPlan, RegExp | string]>([
    ['no gateway configured', () => plan('claude', ['ANTHROPIC_API_KEY'], { gateway: false }), NO_GATEWAY],
    ['subscription auth (auto prefers the subscription present)', () => plan('claude', ['ANTHROPIC_API_KEY'], { subscription: true }), SUBSCRIPTION_AUTH],
    ['subscription auth asked by the Run', () => plan('claude', ['ANTHROPIC_API_KEY'], { subscription: true, authMode: 'subscription' }), SUBSCRIPTION_AUTH],
    ['a manifest that keeps its key (key_in_harness)', () => plan('cursor', ['CURSOR_API_KEY']), /Cursor/],
    ['the key from the chart\'s plain driver.env, which the gateway does not hold', () => plan('claude', [], { driverEnv: { ANTHROPIC_API_KEY: 'x' } }), /driver\.env/],
    ['a per-harness key (TCAB_API_KEY_<SLUG>): the gateway holds one key per provider', () => plan('claude', [apiKeyOverrideVariable('claude'), 'ANTHROPIC_API_KEY']), /the gateway reads anthropic's key from ANTHROPIC_API_KEY, not TCAB_API_KEY_CLAUDE/],
  ])('key in harness: %s', (_, made, why) => {
    const got = made();
    expect(got).toHaveProperty('keyInHarness');
    const reason = (got as { keyInHarness: string }).keyInHarness;
    if (typeof why === 'string') expect(reason).toBe(why);
    else expect(reason).toMatch(why);
  });

  it('an api-key Run with a subscription present goes through the gateway when the Run asks for api-key', () => {
    expect(plan('claude', ['ANTHROPIC_API_KEY'], { subscription: true, authMode: 'api-key' })).toEqual({ gateway: { keyVar: 'ANTHROPIC_API_KEY', provider: 'anthropic' } });
  });
});
