import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileProviders, DEFAULT_PROVIDERS, keysFromEnv, providerConfigs } from './providers.ts';
import { CREDENTIAL_HEADERS, HOP_BY_HOP, clientHeaders, parseTarget, pathProblem, presentedCredential, requestModel, scrub, splitQuery, upstreamHeaders, upstreamPath } from './request.ts';

const PROVIDERS = compileProviders(DEFAULT_PROVIDERS);
const NAMES = [...PROVIDERS.keys()];

describe('parseTarget', () => {
  it.each([
    ['/p/anthropic/v1/messages?beta=true', { provider: 'anthropic', path: '/v1/messages', protocol: 'anthropic', query: 'beta=true', queryKeys: [] }, '/v1/messages?beta=true'],
    ['/p/anthropic/v1/messages/count_tokens', { provider: 'anthropic', path: '/v1/messages/count_tokens', protocol: null, query: '' }, '/v1/messages/count_tokens'],
    ['/p/openai/v1/responses', { provider: 'openai', protocol: 'openai-responses' }, '/v1/responses'],
    ['/p/openai/v1/chat/completions', { provider: 'openai', protocol: 'openai-chat' }, '/v1/chat/completions'],
    ['/p/openrouter/v1/chat/completions', { provider: 'openrouter', protocol: 'openai-chat' }, '/api/v1/chat/completions'],
    ['/p/dashscope/v1/chat/completions', { provider: 'dashscope', protocol: 'openai-chat' }, '/compatible-mode/v1/chat/completions'],
    ['/p/google/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=tok', { provider: 'google', protocol: 'gemini', query: 'alt=sse', queryKeys: ['tok'] }, '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse'],
    ['/p/google/v1beta/models/gemini-2.5-pro:countTokens?KEY=a&key=b&x=%20', { provider: 'google', protocol: null, query: 'x=%20', queryKeys: ['a', 'b'] }, '/v1beta/models/gemini-2.5-pro:countTokens?x=%20'],
    ['/p/google/v1beta/models', { provider: 'google', protocol: null }, '/v1beta/models'],
  ] as const)('%s', (url, want, upstream) => {
    const target = parseTarget(url, PROVIDERS);
    if (!target.ok) throw new Error(target.message);
    expect({ ...target, provider: target.provider.name }).toMatchObject(want);
    expect(upstreamPath(target)).toBe(upstream);
  });

  it.each([
    ['/', 404],
    ['/p/', 404],
    ['/p/nope/v1/messages', 404],
    ['/p/constructor/v1/messages', 404],
    ['/p/__proto__/v1/messages', 404],
    ['/p/toString', 404],
    ['/p/Anthropic/v1/messages', 404],
    ['/p/%61nthropic/v1/messages', 404],
    ['/p/anthropic', 400],
    ['/p/anthropic/', 400],
    ['/p/anthropic/v1/files', 404],
    ['/p/anthropic/v1/messages/', 400],
    ['/p/anthropic/../openai/v1/responses', 400],
    ['/p/anthropic/./v1/messages', 400],
    ['/p/anthropic//v1/messages', 400],
    ['/p/anthropic/v1//messages', 400],
    ['/p/anthropic/v1%2fmessages', 400],
    ['/p/anthropic/v1%2Fmessages', 400],
    ['/p/anthropic/v1/%2e%2e/messages', 400],
    ['/p/anthropic/v1/.%2E/messages', 400],
    ['/p/anthropic/v1\\..\\messages', 400],
    ['/p/anthropic/v1/mes%00sages', 400],
    ['/p/anthropic/v1/messages#x', 400],
    ['/p/google/v1beta/models/x:generateContent?%ZZ=1', 400],
    ['//p/anthropic/v1/messages', 404],
    ['http://evil/p/anthropic/v1/messages', 404],
  ] as const)('refuses %s with %i', (url, status) => {
    const target = parseTarget(url, PROVIDERS);
    expect(target.ok).toBe(false);
    if (!target.ok) expect(target.status).toBe(status);
  });

  // Segments an attacker would try, and arbitrary text.
  const segment = fc.oneof(
    fc.constantFrom('', '.', '..', '%2e', '%2E%2e', '.%2e', '%2f', '%2F', '%5c', '\\', 'v1', 'messages', 'responses', 'chat', 'completions', 'models', 'x:generateContent', '%00', '%7f', '%41', '%', '%g0', '?', '#', 'constructor', '__proto__', 'anthropic', 'openai'),
    fc.string({ maxLength: 6 }),
  );
  const url = fc.oneof(
    fc.tuple(fc.constantFrom(...NAMES, 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', ''), fc.array(segment, { maxLength: 6 }), fc.option(fc.string({ maxLength: 12 }))).map(([name, segs, q]) => `/p/${name}/${segs.join('/')}${q === null ? '' : `?${q}`}`),
    fc.string().map((s) => `/p/${s}`),
    fc.string(),
  );

  it('property: never throws; whatever passes is a plain path of a listed provider that no URL parser would move', () => {
    fc.assert(
      fc.property(url, (raw) => {
        const target = parseTarget(raw, PROVIDERS);
        if (!target.ok) {
          if (target.provider) expect(NAMES).toContain(target.provider.name);
          return;
        }
        expect(NAMES).toContain(target.provider.name);
        expect(Object.hasOwn(Object.prototype, target.provider.name)).toBe(false);
        const upstream = upstreamPath(target);
        const pathOnly = upstream.split('?')[0]!;
        expect(pathOnly.startsWith(`${target.provider.basePath}/`)).toBe(true);
        expect(pathOnly).not.toMatch(/\/\.{1,2}(\/|$)|\/\/|%2f|%2e|%5c|\\/i);
        // WHATWG URL resolution (what an upstream or an intermediary does) leaves the path as it is.
        expect(new URL(upstream, 'https://upstream.example').pathname).toBe(pathOnly);
        expect(upstream).not.toMatch(/[?&]key=/i);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('pathProblem', () => {
  it.each(['/v1/messages', '/v1beta/models/gemini-2.5-pro:generateContent', "/a-b_c~d!$&'()*+,;=:@", '/x%20y', '/%41'])('accepts %s', (p) => expect(pathProblem(p)).toBeUndefined());
  it.each(['', 'v1', '/', '//', '/a//b', '/..', '/a/.', '/a%2Fb', '/a%2e', '/a%5C', '/a b', '/a%', '/a%zz', '/a%0a', '/ä'])('refuses %j', (p) => expect(pathProblem(p)).toBeDefined());
});

describe('splitQuery', () => {
  it('property: `key` parameters (however their name is encoded) leave, the rest stays byte for byte', () => {
    const name = fc.oneof(fc.constantFrom('key', 'KEY', 'Key', 'alt', 'x', 'keys', 'akey'), fc.string({ maxLength: 5 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.string({ maxLength: 8 }), fc.boolean()), { maxLength: 6 }), (pairs) => {
        const pieces = pairs.map(([n, v, encodeAll]) => `${encodeAll ? [...n].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('') : encodeURIComponent(n)}=${encodeURIComponent(v)}`);
        const asciiName = (n: string) => [...n].every((c) => c.charCodeAt(0) < 0x80);
        const isKey = (n: string) => n.trim().toLowerCase() === 'key';
        const split = splitQuery(pieces.join('&'));
        if (pairs.some(([n, , encodeAll]) => encodeAll && !asciiName(n))) return; // %-encoding of non-ASCII UTF-16 units is not UTF-8
        expect(split).toBeDefined();
        expect(split!.keys).toEqual(pairs.filter(([n]) => isKey(n)).map(([, v]) => v));
        expect(split!.forwarded).toBe(pieces.filter((_, i) => !isKey(pairs[i]![0])).join('&'));
      }),
      { numRuns: 2000 },
    );
  });
  it('refuses a malformed escape in a name or a key', () => {
    expect(splitQuery('%E0%A4%A=1')).toBeUndefined();
    expect(splitQuery('key=%')).toBeUndefined();
    expect(splitQuery('x=%')).toEqual({ forwarded: 'x=%', keys: [] }); // other values pass as sent
  });
});

describe('presentedCredential', () => {
  const ANTHROPIC = ['x-api-key', 'bearer'] as const;
  it.each([
    [['x-api-key', 't'], [], ANTHROPIC, { ok: true, token: 't' }],
    [['Authorization', 'Bearer t'], [], ANTHROPIC, { ok: true, token: 't' }],
    [['authorization', 'bearer   t '], [], ANTHROPIC, { ok: true, token: 't' }],
    [['x-api-key', 't', 'authorization', 'Bearer t'], [], ANTHROPIC, { ok: true, token: 't' }],
    [[], [], ANTHROPIC, { ok: false, reason: 'missing' }],
    [['x-api-key', 't', 'authorization', 'Bearer u'], [], ANTHROPIC, { ok: false, reason: 'conflicting' }],
    [['x-api-key', 't'], ['u'], ANTHROPIC, { ok: false, reason: 'conflicting' }],
    [['x-api-key', 't', 'x-api-key', 'u'], [], ANTHROPIC, { ok: false, reason: 'conflicting' }],
    [['x-goog-api-key', 't'], [], ANTHROPIC, { ok: false, reason: 'wrong_place' }],
    [['authorization', 'Basic t'], [], ANTHROPIC, { ok: false, reason: 'wrong_place' }],
    [['api-key', 't'], [], ANTHROPIC, { ok: false, reason: 'wrong_place' }],
    [[], ['t'], ['x-goog-api-key', 'query-key'], { ok: true, token: 't' }],
    [['x-goog-api-key', 't'], ['t'], ['x-goog-api-key', 'query-key'], { ok: true, token: 't' }],
  ] as const)('%j + ?key=%j (takes %j) -> %j', (headers, keys, accepts, want) => {
    expect(presentedCredential(headers, keys, accepts)).toEqual(want);
  });
});

describe('headers', () => {
  it('upstream: hop-by-hop, Connection-named, Host, Expect and every credential go; the real key is added the provider\'s way', () => {
    const raw = ['Host', 'gw:1', 'Connection', 'keep-alive, X-Drop', 'X-Drop', '1', 'Keep-Alive', 'timeout=5', 'TE', 'trailers', 'Transfer-Encoding', 'chunked', 'Upgrade', 'h2c', 'Proxy-Authorization', 'x', 'Expect', '100-continue', 'Authorization', 'Bearer tok', 'x-api-key', 'tok', 'x-goog-api-key', 'tok', 'api-key', 'tok', 'Content-Type', 'application/json', 'anthropic-version', '2023-06-01', 'Accept', 'a', 'Accept', 'b'];
    expect(upstreamHeaders(raw, { sendsKeyAs: 'x-api-key' }, 'REAL')).toEqual(['Content-Type', 'application/json', 'anthropic-version', '2023-06-01', 'Accept', 'a', 'Accept', 'b', 'x-api-key', 'REAL']);
    expect(upstreamHeaders(raw, { sendsKeyAs: 'bearer' }, 'REAL').slice(-2)).toEqual(['authorization', 'Bearer REAL']);
    expect(upstreamHeaders(raw, { sendsKeyAs: 'x-goog-api-key' }, 'REAL').slice(-2)).toEqual(['x-goog-api-key', 'REAL']);
  });

  it('property: upstream headers hold exactly one credential, the real key, and no hop-by-hop header', () => {
    const name = fc.oneof(fc.constantFrom(...HOP_BY_HOP, ...CREDENTIAL_HEADERS, 'Host', 'Connection', 'AUTHORIZATION', 'X-Api-Key', 'content-type', 'x-custom'), fc.stringMatching(/^[a-zA-Z-]{1,10}$/));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.string({ maxLength: 10 })), { maxLength: 12 }), fc.constantFrom('x-api-key', 'bearer', 'x-goog-api-key'), (pairs, sendsKeyAs) => {
        const out = upstreamHeaders(pairs.flat(), { sendsKeyAs }, 'REAL');
        const names = out.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
        expect(names.filter((n) => CREDENTIAL_HEADERS.has(n))).toHaveLength(1);
        expect(names.some((n) => HOP_BY_HOP.has(n) || n === 'host')).toBe(false);
        expect(out.at(-1)).toBe(sendsKeyAs === 'bearer' ? 'Bearer REAL' : 'REAL');
      }),
      { numRuns: 1000 },
    );
  });

  it('client: hop-by-hop and Connection-named headers go, the rest stay (secrets redacted)', () => {
    expect(clientHeaders({ connection: 'x-a', 'x-a': '1', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', 'proxy-authenticate': 'b', 'content-type': 'text/event-stream', 'set-cookie': ['a=REAL', 'b'], 'x-b': 'key REAL' }, ['REAL'])).toEqual({
      'content-type': 'text/event-stream',
      'set-cookie': ['a=[REDACTED]', 'b'],
      'x-b': 'key [REDACTED]',
    });
    expect(scrub('a REAL b REAL', ['REAL', ''])).toBe('a [REDACTED] b [REDACTED]');
  });
});

describe('requestModel', () => {
  it.each([
    ['anthropic', '/v1/messages', '{"model":"claude-sonnet-4-5","messages":[]}', 'claude-sonnet-4-5'],
    ['openai-chat', '/v1/chat/completions', '{ "model" : "qwen\\/3" }', 'qwen/3'],
    ['openai-responses', '/v1/responses', '{"input":"say \\"model\\":\\"x\\""}', null],
    ['openai-responses', '/v1/responses', '{"model":""}', null],
    ['gemini', '/v1beta/models/gemini-2.5-pro:generateContent', '{"model":"ignored"}', 'gemini-2.5-pro'],
    ['gemini', '/v1beta/models/a%20b:generateContent', '', 'a b'],
    ['gemini', '/v1beta/models', '', null],
  ] as const)('%s %s %s -> %s', (protocol, path, body, model) => {
    expect(requestModel(protocol, path, body)).toBe(model);
  });
});

describe('provider table', () => {
  it('reads the real keys from the variables the manifests name', () => {
    expect(keysFromEnv({ ANTHROPIC_API_KEY: 'a', GEMINI_API_KEY: '', GOOGLE_API_KEY: 'g', OPENROUTER_API_KEY: 'o', DASHSCOPE_API_KEY: 'd', OTHER: 'x' })).toEqual({ anthropic: 'a', google: 'g', openrouter: 'o', dashscope: 'd' });
    expect(keysFromEnv({})).toEqual({});
  });

  it('overrides replace fields of the defaults; bad tables are refused naming the field', () => {
    expect(compileProviders(providerConfigs({ anthropic: { upstream: 'http://127.0.0.1:9/base/' } })).get('anthropic')).toMatchObject({ origin: 'http://127.0.0.1:9', basePath: '/base' });
    expect(() => providerConfigs({ constructor: { upstream: 'http://x' } })).toThrow(/providers.constructor/);
    expect(() => compileProviders([{ ...DEFAULT_PROVIDERS[0]!, upstream: 'ftp://x' }])).toThrow(/providers\[0\]\.upstream/);
    expect(() => compileProviders([{ ...DEFAULT_PROVIDERS[0]!, upstream: 'https://x/?q=1' }])).toThrow(/without query/);
    expect(() => compileProviders([{ ...DEFAULT_PROVIDERS[0]!, name: 'Bad Name' }])).toThrow(/providers\[0\]\.name/);
    expect(() => compileProviders([DEFAULT_PROVIDERS[0]!, DEFAULT_PROVIDERS[0]!])).toThrow(/listed twice/);
    expect(() => compileProviders([{ ...DEFAULT_PROVIDERS[0]!, routes: [{ path: '(', protocol: null }] }])).toThrow(/routes\[0\]\.path/);
  });
});
