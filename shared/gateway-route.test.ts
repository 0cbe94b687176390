import { describe, expect, it } from 'vitest';
import { gatewayProviderFor, keyRouteText, keyRoutesOf, NO_GATEWAY_ROUTE } from './gateway-route.ts';
import { HarnessManifest } from './manifest.ts';

const manifest = (slug: string, hostVars: string[] | undefined, gateway?: unknown): HarnessManifest =>
  HarnessManifest.parse({
    slug,
    name: slug,
    strategy: 'structured',
    binary: slug,
    docs_url: 'https://example.com/docs',
    min_supported: '1.0.0',
    latest_validated: '1.0.0',
    install: { command: ['true'] },
    version_command: [slug, '--version'],
    auth: hostVars ? { modes: ['api-key'], api_key: { host_vars: hostVars, inject_as: hostVars[0] } } : { modes: ['subscription'], subscription: { files: ['.x/auth.json'], sign_in: 'run `x login`' } },
    ...(gateway === undefined ? {} : { gateway }),
    model_ids: 'mixed',
  });

const QWEN = manifest('qwen', ['DASHSCOPE_API_KEY', 'OPENAI_API_KEY'], { providers: { DASHSCOPE_API_KEY: 'dashscope', OPENAI_API_KEY: 'openai' } });
const MY_CLI = manifest('my-cli', ['OPENROUTER_API_KEY'], { providers: { OPENROUTER_API_KEY: 'openrouter' } });
const VENDOR = manifest('amp', ['AMP_API_KEY'], { key_in_harness: 'the vendor backend takes no base URL' });
const UNDECLARED = manifest('old', ['ANTHROPIC_API_KEY']);

describe('gatewayProviderFor', () => {
  it.each([
    ['a host variable -> its provider', QWEN, 'DASHSCOPE_API_KEY', { provider: 'dashscope' }],
    ['each host variable has its own provider', QWEN, 'OPENAI_API_KEY', { provider: 'openai' }],
    ['the per-harness override -> the first host variable\'s provider', QWEN, 'TCAB_API_KEY_QWEN', { provider: 'dashscope' }],
    ['the override of a slug with a dash (TCAB_API_KEY_MY_CLI)', MY_CLI, 'TCAB_API_KEY_MY_CLI', { provider: 'openrouter' }],
    ['key_in_harness -> its reason, for every variable', VENDOR, 'AMP_API_KEY', { keyInHarness: 'the vendor backend takes no base URL' }],
    ['key_in_harness -> its reason, for the override too', VENDOR, 'TCAB_API_KEY_AMP', { keyInHarness: 'the vendor backend takes no base URL' }],
    ['no gateway section -> keyInHarness "no gateway route declared"', UNDECLARED, 'ANTHROPIC_API_KEY', { keyInHarness: NO_GATEWAY_ROUTE }],
    ['another harness\'s override is not this one\'s key', QWEN, 'TCAB_API_KEY_CLAUDE', { keyInHarness: "TCAB_API_KEY_CLAUDE is not one of qwen's key variables (DASHSCOPE_API_KEY, OPENAI_API_KEY): no gateway route for it" }],
    ['a variable the manifest does not name is not routed', QWEN, 'ANTHROPIC_API_KEY', { keyInHarness: "ANTHROPIC_API_KEY is not one of qwen's key variables (DASHSCOPE_API_KEY, OPENAI_API_KEY): no gateway route for it" }],
  ])('%s', (_name, m, keyVariable, expected) => {
    expect(gatewayProviderFor(m, keyVariable)).toEqual(expected);
  });

  it('NO_GATEWAY_ROUTE is the words the brief names', () => {
    expect(NO_GATEWAY_ROUTE).toBe('no gateway route declared');
  });
});

describe('keyRoutesOf and keyRouteText', () => {
  it.each([
    ['providers in host_vars order, no repeats', manifest('gemini', ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], { providers: { GEMINI_API_KEY: 'google', GOOGLE_API_KEY: 'google' } }), { gateway: ['google'] }, 'gateway: google'],
    ['several providers', QWEN, { gateway: ['dashscope', 'openai'] }, 'gateway: dashscope or openai'],
    ['key in harness, with its reason', VENDOR, { keyInHarness: 'the vendor backend takes no base URL' }, 'key in harness: the vendor backend takes no base URL'],
    ['no gateway section', UNDECLARED, { keyInHarness: NO_GATEWAY_ROUTE }, 'key in harness: no gateway route declared'],
  ])('%s', (_name, m, routes, text) => {
    expect(keyRoutesOf(m)).toEqual(routes);
    expect(keyRouteText(keyRoutesOf(m)!)).toBe(text);
  });

  it('a harness without an API-key mode has no key route', () => {
    expect(keyRoutesOf(manifest('sub-only', undefined))).toBeUndefined();
  });
});
