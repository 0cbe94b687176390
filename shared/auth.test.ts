import { describe, expect, it } from 'vitest';
import { apiKeyOverrideVariable, authModeVariable, resolveAuth } from './auth.ts';
import type { ManifestAuth } from './auth.ts';
import { InvalidInputError } from './errors.ts';
import { getHarness, listHarnesses, manifestForModel } from '../harnesses/registry.ts';

const BOTH: ManifestAuth = {
  modes: ['subscription', 'api-key'],
  api_key: { host_vars: ['ANTHROPIC_API_KEY'], inject_as: 'ANTHROPIC_API_KEY', inject_env: {} },
  subscription: { files: ['.claude/.credentials.json'], sign_in: 'run `claude` and sign in' },
};
const KEY_ONLY: ManifestAuth = { modes: ['api-key'], api_key: { host_vars: ['OPENAI_API_KEY'], inject_as: 'CODEX_API_KEY', inject_env: {} } };
const SUB_ONLY: ManifestAuth = { modes: ['subscription'], subscription: { files: ['.x/auth.json'], sign_in: 'run `x login`' } };

const files = (present: boolean) => () => present;

describe('resolveAuth: modes, overrides and precedence', () => {
  it.each([
    ['auto + credentials present -> subscription', BOTH, { ANTHROPIC_API_KEY: 'k' }, true, undefined, { available: true, mode: 'subscription', setting: 'auto' }],
    ['auto + no credentials + key -> api-key', BOTH, { ANTHROPIC_API_KEY: 'k' }, false, undefined, { available: true, mode: 'api-key', keyVar: 'ANTHROPIC_API_KEY' }],
    ['auto + neither -> unavailable, naming both ways', BOTH, {}, false, undefined, { available: false, mode: null, reason: 'set ANTHROPIC_API_KEY or TCAB_API_KEY_CLAUDE, or run `claude` and sign in to create ~/.claude/.credentials.json' }],
    ['TCAB_AUTH_MODE=api-key wins over present credentials', BOTH, { TCAB_AUTH_MODE: 'api-key', ANTHROPIC_API_KEY: 'k' }, true, undefined, { available: true, mode: 'api-key', settingSource: 'TCAB_AUTH_MODE' }],
    ['TCAB_AUTH_MODE=api-key without a key -> unavailable (no fallback to subscription)', BOTH, { TCAB_AUTH_MODE: 'api-key' }, true, undefined, { available: false, mode: 'api-key', reason: 'set ANTHROPIC_API_KEY or TCAB_API_KEY_CLAUDE' }],
    ['TCAB_AUTH_MODE=subscription without files -> unavailable (no key injected)', BOTH, { TCAB_AUTH_MODE: 'subscription', ANTHROPIC_API_KEY: 'k' }, false, undefined, { available: false, mode: 'subscription' }],
    ['per-harness mode wins over the shared one', BOTH, { TCAB_AUTH_MODE: 'api-key', TCAB_AUTH_MODE_CLAUDE: 'subscription' }, true, undefined, { available: true, mode: 'subscription', settingSource: 'TCAB_AUTH_MODE_CLAUDE' }],
    ['the spec override wins over both variables', BOTH, { TCAB_AUTH_MODE_CLAUDE: 'subscription', ANTHROPIC_API_KEY: 'k' }, true, 'api-key', { available: true, mode: 'api-key', settingSource: 'spec.authMode' }],
    ['empty variables count as absent', BOTH, { TCAB_AUTH_MODE: '', ANTHROPIC_API_KEY: '' }, false, undefined, { available: false, setting: 'auto' }],
    ['TCAB_API_KEY_<SLUG> beats the provider variable', BOTH, { ANTHROPIC_API_KEY: 'shared', TCAB_API_KEY_CLAUDE: 'own' }, false, undefined, { available: true, mode: 'api-key', keyVar: 'TCAB_API_KEY_CLAUDE' }],
    ['a locked mode the harness lacks -> unavailable, naming the supported modes', KEY_ONLY, { TCAB_AUTH_MODE: 'subscription', OPENAI_API_KEY: 'k' }, true, undefined, { available: false, mode: null, reason: 'TCAB_AUTH_MODE selects subscription, which claude does not support (supported: api-key)' }],
    ['key injected under the harness variable, not the host one', KEY_ONLY, { OPENAI_API_KEY: 'k' }, false, undefined, { available: true, mode: 'api-key', keyVar: 'OPENAI_API_KEY', injectAs: 'CODEX_API_KEY' }],
    ['subscription-only harness without files', SUB_ONLY, {}, false, undefined, { available: false, reason: 'run `x login` to create ~/.x/auth.json' }],
  ] as const)('%s', (_name, auth, env, present, specOverride, expected) => {
    expect(resolveAuth(auth, 'claude', { env, credentialFilePresent: files(present), specOverride })).toMatchObject(expected);
  });

  it.each([['TCAB_AUTH_MODE', { TCAB_AUTH_MODE: 'oauth' }], ['TCAB_AUTH_MODE_CLAUDE', { TCAB_AUTH_MODE_CLAUDE: 'apikey', TCAB_AUTH_MODE: 'auto' }]])('an invalid %s is an error naming it and the allowed values', (variable, env) => {
    const attempt = () => resolveAuth(BOTH, 'claude', { env, credentialFilePresent: files(false) });
    expect(attempt).toThrow(InvalidInputError);
    expect(attempt).toThrow(`${variable}: "${Object.values(env)[0]}" is not an auth mode; use one of auto, subscription, api-key`);
  });

  it('names variables from slugs with dashes', () => {
    expect(authModeVariable('my-cli')).toBe('TCAB_AUTH_MODE_MY_CLI');
    expect(apiKeyOverrideVariable('my-cli')).toBe('TCAB_API_KEY_MY_CLI');
  });

  it('gg takes the first provider key present', () => {
    expect(resolveAuth(getHarness('gg').manifest.auth, 'gg', { env: { OPENAI_API_KEY: 'k' }, credentialFilePresent: files(false) })).toMatchObject({ available: true, keyVar: 'OPENAI_API_KEY' });
  });

  it('gg for one model takes only that provider\'s key', () => {
    const claude = manifestForModel(getHarness('gg'), 'claude-sonnet-4-5').auth;
    expect(resolveAuth(claude, 'gg', { env: { OPENAI_API_KEY: 'k' }, credentialFilePresent: files(false) })).toMatchObject({ available: false, reason: 'set ANTHROPIC_API_KEY or TCAB_API_KEY_GG' });
    expect(resolveAuth(claude, 'gg', { env: { ANTHROPIC_API_KEY: 'k' }, credentialFilePresent: files(false) })).toMatchObject({ available: true, keyVar: 'ANTHROPIC_API_KEY', injectAs: 'TCAB_GG_API_KEY' });
  });
});

describe('resolveAuth: every harness manifest', () => {
  const harnesses = listHarnesses();
  it('finds harnesses', () => expect(harnesses.length).toBeGreaterThan(0));
  it.each(harnesses.map((h) => [h.manifest.slug, h.manifest] as const))('%s: its variables resolve and its override wins', (slug, manifest) => {
    const auth = manifest.auth;
    if (auth.api_key) {
      const hostVar = auth.api_key.host_vars[0]!;
      const viaHost = resolveAuth(auth, slug, { env: { TCAB_AUTH_MODE: 'api-key', [hostVar]: 'k1' }, credentialFilePresent: files(false) });
      expect(viaHost).toMatchObject({ available: true, mode: 'api-key', keyVar: hostVar, injectAs: auth.api_key.inject_as });
      const viaOverride = resolveAuth(auth, slug, { env: { TCAB_AUTH_MODE: 'api-key', [hostVar]: 'k1', [apiKeyOverrideVariable(slug)]: 'k2' }, credentialFilePresent: files(false) });
      expect(viaOverride).toMatchObject({ keyVar: apiKeyOverrideVariable(slug) });
    }
    if (auth.subscription) {
      expect(resolveAuth(auth, slug, { env: {}, credentialFilePresent: files(true) })).toMatchObject({ available: true, mode: 'subscription', files: auth.subscription.files });
    }
  });
});
