// The providers the gateway forwards to (issue 34): pure configuration. A harness's base URL is
// `<gateway>/p/<name>`; the gateway strips `/p/<name>` and forwards the rest of the path (and the query, minus a
// `key` it swaps) to `upstream`. Only the paths of `routes` are served: those are the endpoints coding agents call
// (a run's token must not reach a provider's files, batches, fine-tuning or key-management APIs with the real key,
// which would spend outside what the gateway meters). Each route names the wire its responses are metered in
// (null: a free endpoint such as a model list or a token count, forwarded but not metered).
//
// Credentials, per the providers' docs:
//   Anthropic  `x-api-key: <key>` (docs.anthropic.com/en/api/overview#authentication); `Authorization: Bearer` is
//              taken from clients that send it (ANTHROPIC_AUTH_TOKEN), the real key always goes as x-api-key.
//   OpenAI and OpenAI-compatible (OpenRouter, DashScope)  `Authorization: Bearer <key>`
//              (platform.openai.com/docs/api-reference/authentication).
//   Gemini     `x-goog-api-key: <key>` or `?key=<key>` (ai.google.dev/api/generate-content); the real key always
//              goes as the header, so it never sits in a URL (proxies and access logs record URLs).
import { z } from 'zod';
import { PROVIDER_NAME, WIRE_PROTOCOLS } from '../shared/gateway.ts';
import type { WireProtocol } from '../shared/gateway.ts';
import type { ModelIdFamily } from '../shared/cost.ts';
import { InvalidInputError } from '../shared/errors.ts';

/** Where a client may put its credential. */
export const CREDENTIAL_PLACES = ['x-api-key', 'bearer', 'x-goog-api-key', 'query-key'] as const;
export type CredentialPlace = (typeof CREDENTIAL_PLACES)[number];

/** How the real key is sent upstream. */
export const KEY_HEADERS = ['x-api-key', 'bearer', 'x-goog-api-key'] as const;
export type KeyHeader = (typeof KEY_HEADERS)[number];

/** The model id family a provider's response models are written in (shared/cost.ts prices them with it). */
const ID_FAMILY = z.enum(['anthropic', 'openai', 'google', 'qwen', 'openrouter', 'mixed', 'vendor']);

export const ProviderRoute = z.strictObject({
  /** A regular expression over the path after `/p/<name>` (no query), anchored by the caller's writing ^...$. */
  path: z.string().min(1),
  /** The wire the response is metered in; null = forwarded, not metered (free endpoints). */
  protocol: z.enum(WIRE_PROTOCOLS).nullable(),
});
export type ProviderRoute = z.infer<typeof ProviderRoute>;

export const ProviderConfig = z.strictObject({
  name: z.string().regex(PROVIDER_NAME, 'a lower-case name of letters, digits and dashes (the URL segment after /p/)'),
  /** The provider's own error shape and default wire: anthropic, openai-* or gemini. */
  protocol: z.enum(WIRE_PROTOCOLS),
  /** Base URL the rest of the path is appended to (https in production; http for a stub on loopback). */
  upstream: z.url({ protocol: /^https?$/ }),
  accepts: z.array(z.enum(CREDENTIAL_PLACES)).min(1),
  sendsKeyAs: z.enum(KEY_HEADERS),
  idFamily: ID_FAMILY,
  routes: z.array(ProviderRoute).min(1),
  /** Environment variables that hold this provider's key on a host (the manifests' `[auth.api_key] host_vars`), first found wins. */
  keyVars: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/)).default([]),
});
export type ProviderConfig = z.input<typeof ProviderConfig>;

/** A provider ready to serve: its routes compiled, its upstream split into origin and base path. */
export interface Provider {
  readonly name: string;
  readonly protocol: WireProtocol;
  readonly origin: string;
  /** The upstream URL's path without a trailing slash ('' for a bare host). */
  readonly basePath: string;
  readonly accepts: readonly CredentialPlace[];
  readonly sendsKeyAs: KeyHeader;
  readonly idFamily: ModelIdFamily;
  readonly routes: readonly { readonly path: RegExp; readonly protocol: WireProtocol | null }[];
}

const OPENAI_COMPATIBLE_ROUTES: ProviderRoute[] = [
  { path: '^/v1/chat/completions$', protocol: 'openai-chat' },
  { path: '^/v1/responses$', protocol: 'openai-responses' },
  { path: '^/v1/models(/[^/]+){0,3}$', protocol: null },
];

/** The default table: the providers the harness manifests' keys belong to. */
export const DEFAULT_PROVIDERS: readonly ProviderConfig[] = [
  {
    name: 'anthropic',
    protocol: 'anthropic',
    upstream: 'https://api.anthropic.com',
    accepts: ['x-api-key', 'bearer'],
    sendsKeyAs: 'x-api-key',
    idFamily: 'anthropic',
    keyVars: ['ANTHROPIC_API_KEY'],
    routes: [
      { path: '^/v1/messages$', protocol: 'anthropic' },
      { path: '^/v1/messages/count_tokens$', protocol: null },
      { path: '^/v1/models(/[^/]+)?$', protocol: null },
    ],
  },
  {
    name: 'openai',
    protocol: 'openai-responses',
    upstream: 'https://api.openai.com',
    accepts: ['bearer'],
    sendsKeyAs: 'bearer',
    idFamily: 'openai',
    keyVars: ['OPENAI_API_KEY'],
    routes: [
      { path: '^/v1/responses$', protocol: 'openai-responses' },
      // Codex's remote compaction of a long conversation: a Responses call of its own, billed like one.
      { path: '^/v1/responses/compact$', protocol: 'openai-responses' },
      { path: '^/v1/chat/completions$', protocol: 'openai-chat' },
      { path: '^/v1/models(/[^/]+)?$', protocol: null },
    ],
  },
  {
    name: 'google',
    protocol: 'gemini',
    upstream: 'https://generativelanguage.googleapis.com',
    accepts: ['x-goog-api-key', 'query-key'],
    sendsKeyAs: 'x-goog-api-key',
    idFamily: 'google',
    keyVars: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    routes: [
      { path: '^/(v1|v1beta|v1alpha)/models/[^/:]+:(generateContent|streamGenerateContent)$', protocol: 'gemini' },
      { path: '^/(v1|v1beta|v1alpha)/models/[^/:]+:countTokens$', protocol: null },
      { path: '^/(v1|v1beta|v1alpha)/models(/[^/:]+)?$', protocol: null },
    ],
  },
  { name: 'openrouter', protocol: 'openai-chat', upstream: 'https://openrouter.ai/api', accepts: ['bearer'], sendsKeyAs: 'bearer', idFamily: 'openrouter', keyVars: ['OPENROUTER_API_KEY'], routes: OPENAI_COMPATIBLE_ROUTES },
  // Qwen (Alibaba Cloud Model Studio, international endpoint), OpenAI-compatible.
  { name: 'dashscope', protocol: 'openai-chat', upstream: 'https://dashscope-intl.aliyuncs.com/compatible-mode', accepts: ['bearer'], sendsKeyAs: 'bearer', idFamily: 'qwen', keyVars: ['DASHSCOPE_API_KEY'], routes: OPENAI_COMPATIBLE_ROUTES },
  // Mistral (La Plateforme) and xAI: both OpenAI-compatible chat completions under /v1 (Mistral Vibe, Grok CLI).
  { name: 'mistral', protocol: 'openai-chat', upstream: 'https://api.mistral.ai', accepts: ['bearer'], sendsKeyAs: 'bearer', idFamily: 'vendor', keyVars: ['MISTRAL_API_KEY'], routes: OPENAI_COMPATIBLE_ROUTES },
  { name: 'xai', protocol: 'openai-chat', upstream: 'https://api.x.ai', accepts: ['bearer'], sendsKeyAs: 'bearer', idFamily: 'vendor', keyVars: ['XAI_API_KEY'], routes: OPENAI_COMPATIBLE_ROUTES },
];

/** The default table with some fields replaced per provider (e.g. `{ anthropic: { upstream: stub.url } }`). */
export function providerConfigs(overrides: Record<string, Partial<ProviderConfig>> = {}): ProviderConfig[] {
  for (const name of Object.keys(overrides)) {
    if (!DEFAULT_PROVIDERS.some((p) => p.name === name)) throw new InvalidInputError(`providers.${name}`, `is not a default provider (${DEFAULT_PROVIDERS.map((p) => p.name).join(', ')}); add it as a whole ProviderConfig instead`);
  }
  return DEFAULT_PROVIDERS.map((p) => ({ ...p, ...(Object.hasOwn(overrides, p.name) ? overrides[p.name] : {}) }));
}

/** The real keys a host's environment holds, by provider (the first non-empty variable of each provider's keyVars). */
export function keysFromEnv(env: Readonly<Record<string, string | undefined>>, configs: readonly ProviderConfig[] = DEFAULT_PROVIDERS): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const config of configs) {
    const name = (config.keyVars ?? []).find((v) => Object.hasOwn(env, v) && env[v]);
    if (name) keys[config.name] = env[name]!;
  }
  return keys;
}

/** Validates a table and compiles it; errors name the provider and field. */
export function compileProviders(configs: readonly ProviderConfig[]): ReadonlyMap<string, Provider> {
  const out = new Map<string, Provider>();
  configs.forEach((raw, i) => {
    const parsed = ProviderConfig.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new InvalidInputError(`providers[${i}].${issue.path.join('.')}`, issue.message, { cause: parsed.error });
    }
    const config = parsed.data;
    if (out.has(config.name)) throw new InvalidInputError(`providers[${i}].name`, `"${config.name}" is listed twice`);
    const url = new URL(config.upstream);
    if (url.search || url.hash || url.username || url.password) throw new InvalidInputError(`providers[${i}].upstream`, 'must be a base URL without query, fragment or credentials');
    const routes = config.routes.map((route, j) => {
      try {
        return { path: new RegExp(route.path), protocol: route.protocol };
      } catch (error) {
        throw new InvalidInputError(`providers[${i}].routes[${j}].path`, 'is not a regular expression', { cause: error });
      }
    });
    out.set(config.name, {
      name: config.name,
      protocol: config.protocol,
      origin: url.origin,
      basePath: url.pathname.replace(/\/+$/, ''),
      accepts: config.accepts,
      sendsKeyAs: config.sendsKeyAs,
      idFamily: config.idFamily,
      routes,
    });
  });
  return out;
}

/** The route serving a path, or undefined (the gateway answers 404 in the provider's shape). */
export function routeOf(provider: Provider, path: string): { protocol: WireProtocol | null } | undefined {
  return provider.routes.find((route) => route.path.test(path));
}

/** The error shape a provider's clients read: Anthropic's, OpenAI's (every OpenAI-compatible one) or Gemini's. */
export function errorStyleOf(protocol: WireProtocol): 'anthropic' | 'openai' | 'gemini' {
  return protocol === 'anthropic' ? 'anthropic' : protocol === 'gemini' ? 'gemini' : 'openai';
}
