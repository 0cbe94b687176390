// The request side of the gateway, pure: which provider and path a request targets, which credential it presents,
// which headers go upstream and which come back. Everything here works on raw strings as they came off the wire
// (no URL normalization), so what is checked is exactly what is forwarded.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { PROVIDER_NAME } from '../shared/gateway.ts';
import type { WireProtocol } from '../shared/gateway.ts';
import type { CredentialPlace, Provider } from './providers.ts';
import { routeOf } from './providers.ts';

/** Hop-by-hop headers (RFC 9110 section 7.6.1, plus the proxy ones of RFC 2616 and `proxy-connection`): never forwarded either way. */
export const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);

/** Headers that carry a credential: always removed from what goes upstream (the real key is added back). */
export const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'api-key']);

export type TargetRefusal = { ok: false; status: 400 | 404; message: string; provider?: Provider };
export interface Target {
  ok: true;
  provider: Provider;
  /** The path after `/p/<provider>`, as sent. */
  path: string;
  /** The wire the route's responses are metered in; null = not metered. */
  protocol: WireProtocol | null;
  /** The query as sent minus every `key` parameter ('' when nothing is left). */
  query: string;
  /** Values of the `key` parameters (decoded): credentials presented in the query. */
  queryKeys: string[];
}

// A path segment's characters (RFC 3986 pchar) and percent escapes; escapes of '/', '\', '.', NUL and other control
// characters are refused, so no upstream can read a segment boundary or a dot segment the gateway did not see.
const SEGMENT = /^(?:[A-Za-z0-9\-_~!$&'()*+,;=:@.]|%(?!2[Ff]|5[Cc]|2[Ee]|[01][0-9A-Fa-f]|7[Ff])[0-9A-Fa-f]{2})+$/;

/** Why a path after `/p/<provider>` is refused, or undefined when it is a plain path. */
export function pathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'the path must start with /';
  const segments = path.slice(1).split('/');
  for (const segment of segments) {
    if (segment === '') return 'empty path segments (//) are not forwarded';
    if (segment === '.' || segment === '..') return 'dot segments are not forwarded';
    if (!SEGMENT.test(segment)) return 'the path has characters or escapes that are not forwarded (encoded /, \\ or ., control characters)';
  }
  return undefined;
}

function decodeQueryPart(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** Splits a query into what is forwarded and the `key` credentials it presented; undefined if a name is malformed. */
export function splitQuery(query: string): { forwarded: string; keys: string[] } | undefined {
  if (query === '') return { forwarded: '', keys: [] };
  const kept: string[] = [];
  const keys: string[] = [];
  for (const piece of query.split('&')) {
    const eq = piece.indexOf('=');
    const name = decodeQueryPart(eq < 0 ? piece : piece.slice(0, eq));
    if (name === undefined) return undefined;
    if (name.trim().toLowerCase() === 'key') {
      const value = eq < 0 ? '' : decodeQueryPart(piece.slice(eq + 1));
      if (value === undefined) return undefined;
      keys.push(value);
    } else kept.push(piece);
  }
  return { forwarded: kept.join('&'), keys };
}

/**
 * Reads a request target (`req.url` as received): `/p/<provider>/<path>?<query>`. The provider name is matched
 * exactly (no decoding) against the table, a Map, so `constructor` or `__proto__` are just unknown names.
 */
export function parseTarget(rawUrl: string, providers: ReadonlyMap<string, Provider>): Target | TargetRefusal {
  if (!rawUrl.startsWith('/p/')) return { ok: false, status: 404, message: 'the gateway serves /p/<provider>/... only' };
  if (rawUrl.includes('#')) return { ok: false, status: 400, message: 'a request target has no fragment' };
  const q = rawUrl.indexOf('?');
  const pathPart = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const slash = pathPart.indexOf('/', 3);
  const name = slash < 0 ? pathPart.slice(3) : pathPart.slice(3, slash);
  const provider = PROVIDER_NAME.test(name) ? providers.get(name) : undefined;
  if (!provider) return { ok: false, status: 404, message: `no provider "${name.slice(0, 40)}" on this gateway` };
  const path = slash < 0 ? '/' : pathPart.slice(slash);
  const problem = pathProblem(path);
  if (problem) return { ok: false, status: 400, message: problem, provider };
  const route = routeOf(provider, path);
  if (!route) return { ok: false, status: 404, message: `the gateway does not serve ${path.slice(0, 200)} for ${provider.name}`, provider };
  const query = splitQuery(q < 0 ? '' : rawUrl.slice(q + 1));
  if (!query) return { ok: false, status: 400, message: 'the query string is malformed', provider };
  return { ok: true, provider, path, protocol: route.protocol, query: query.forwarded, queryKeys: query.keys };
}

/** The upstream request path: the provider's base path, the path, the query. */
export function upstreamPath(target: Target): string {
  return `${target.provider.basePath}${target.path}${target.query ? `?${target.query}` : ''}`;
}

export type CredentialRefusal = 'missing' | 'conflicting' | 'wrong_place';
export type PresentedCredential = { ok: true; token: string } | { ok: false; reason: CredentialRefusal };

/**
 * The credential a request presents. Every place a key can sit is read (headers: Authorization, x-api-key,
 * x-goog-api-key, api-key; the query's `key`), every value must be the same one, and one of the places must be
 * one this provider takes. A real key next to a token, or two tokens, is refused rather than guessed between.
 */
export function presentedCredential(rawHeaders: readonly string[], queryKeys: readonly string[], accepts: readonly CredentialPlace[]): PresentedCredential {
  const found: { place: CredentialPlace | 'other'; value: string }[] = queryKeys.map((value) => ({ place: 'query-key' as const, value }));
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (name === 'authorization') {
      const bearer = /^Bearer[ \t]+(.*)$/i.exec(value);
      found.push(bearer ? { place: 'bearer', value: bearer[1]!.trim() } : { place: 'other', value });
    } else if (name === 'x-api-key' || name === 'x-goog-api-key') found.push({ place: name, value: value.trim() });
    else if (name === 'api-key') found.push({ place: 'other', value: value.trim() });
  }
  if (found.length === 0) return { ok: false, reason: 'missing' };
  const token = found[0]!.value;
  if (found.some((f) => f.value !== token)) return { ok: false, reason: 'conflicting' };
  if (!found.some((f) => f.place !== 'other' && accepts.includes(f.place))) return { ok: false, reason: 'wrong_place' };
  return { ok: true, token };
}

function connectionTokens(values: readonly string[]): Set<string> {
  return new Set(values.flatMap((v) => v.split(',')).map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/**
 * The headers sent upstream, as a flat [name, value, ...] list in the client's order: the client's minus
 * hop-by-hop ones (and those its Connection header names), Host (set from the upstream), Expect, and every
 * credential; then the real key the way the provider takes it.
 */
export function upstreamHeaders(rawHeaders: readonly string[], provider: Pick<Provider, 'sendsKeyAs'>, realKey: string): string[] {
  const lower = new Array<string>(rawHeaders.length >> 1);
  const connection: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (lower[i >> 1] = rawHeaders[i]!.toLowerCase());
    if (name === 'connection') connection.push(rawHeaders[i + 1]!);
  }
  const named = connectionTokens(connection);
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = lower[i >> 1]!;
    if (HOP_BY_HOP.has(name) || named.has(name) || CREDENTIAL_HEADERS.has(name) || name === 'host' || name === 'expect') continue;
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  if (provider.sendsKeyAs === 'bearer') out.push('authorization', `Bearer ${realKey}`);
  else out.push(provider.sendsKeyAs, realKey);
  return out;
}

/** Replaces every occurrence of each secret in a text (for log lines, error messages and headers sent back). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  return out;
}

/**
 * The upstream's response headers as sent to the client: minus hop-by-hop ones (and those its Connection header
 * names); any value holding a secret has it replaced.
 */
export function clientHeaders(headers: IncomingHttpHeaders, secrets: readonly string[]): OutgoingHttpHeaders {
  const connection = headers.connection;
  const named = connectionTokens(connection === undefined ? [] : Array.isArray(connection) ? connection : [connection]);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out[lower] = Array.isArray(value) ? value.map((v) => scrub(v, secrets)) : scrub(value, secrets);
  }
  return out;
}

const MODEL_IN_PATH = /\/models\/([^/:]+):/;
const MODEL_IN_BODY = /"model"\s*:\s*("(?:[^"\\]|\\.){1,256}")/;

/**
 * The model a request names, for attributing answers that name none (a 429, a stream cut short): Gemini's is in
 * the path, the others' is the body's `model`, read from the body's first bytes (SDKs write it first). Best
 * effort, and the client's word: used only where the response names no model.
 */
export function requestModel(protocol: WireProtocol, path: string, bodyHead: string): string | null {
  if (protocol === 'gemini') {
    const m = MODEL_IN_PATH.exec(path);
    if (!m) return null;
    try {
      return decodeURIComponent(m[1]!);
    } catch {
      return m[1]!;
    }
  }
  const m = MODEL_IN_BODY.exec(bodyHead);
  if (!m) return null;
  try {
    const model = JSON.parse(m[1]!) as unknown;
    return typeof model === 'string' && model.length > 0 ? model : null;
  } catch {
    return null;
  }
}
