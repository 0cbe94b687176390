// Streaming and the HTTP edges, against upstreams a test holds in its hand: the first SSE event reaches the
// client while the upstream is still open, a client that goes away aborts the upstream request, hop-by-hop headers
// stay on their hop, compressed bodies pass unchanged and are still metered, throttles are counted.
import { request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from './server.ts';
import type { Gateway, SampleEvent } from './server.ts';
import { capturedLog, providersAt, REAL_KEYS, SIGNING_KEY, startUpstream } from './test-helpers.ts';

type Upstream = Awaited<ReturnType<typeof startUpstream>>;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function setup(handle: Parameters<typeof startUpstream>[0]): Promise<{ upstream: Upstream; gateway: Gateway; samples: SampleEvent[]; lines: string[] }> {
  const upstream = await startUpstream(handle);
  const samples: SampleEvent[] = [];
  const logged = capturedLog();
  const gateway = await startGateway({ providers: providersAt(upstream.url), keys: REAL_KEYS, signingKey: SIGNING_KEY, log: logged.log, onSample: (e) => samples.push(e) });
  cleanups.push(() => upstream.close(), () => gateway.close());
  return { upstream, gateway, samples, lines: logged.lines };
}

const sse = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const MESSAGE_START = sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 10, cache_read_input_tokens: 20, cache_creation_input_tokens: 30, output_tokens: 1 } } });
const REST = [
  sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } }),
  sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
  sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }),
  sse('message_stop', { type: 'message_stop' }),
].join('');

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const post = (g: Gateway, token: string, body = '{"model":"claude-sonnet-4-5","stream":true,"messages":[]}', signal?: AbortSignal) =>
  fetch(`${g.baseUrl('anthropic')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body, ...(signal ? { signal } : {}) });

describe('gateway: streaming', () => {
  it('the first SSE event reaches the client while the upstream still holds the response open', async () => {
    const release = deferred();
    let upstreamRes: ServerResponse | undefined;
    const { gateway, samples } = await setup((_req, res) => {
      upstreamRes = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(MESSAGE_START);
      void release.promise.then(() => res.end(REST));
    });
    const started = performance.now();
    const res = await post(gateway, gateway.mint('run-s', 'u', 60));
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstMs = performance.now() - started;
    expect(Buffer.from(first.value!).toString()).toBe(MESSAGE_START);
    expect(upstreamRes!.writableEnded).toBe(false); // the upstream has not finished: the event was streamed through
    expect(gateway.usage('run-s', 'u')).toMatchObject({ requests: 0 }); // nothing accounted before the response ends
    release.resolve();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe(REST);
    await expect.poll(() => samples.length).toBe(1);
    expect(samples[0]!.sample.tokens).toEqual({ input: 10, output: 7, cache_read: 20, cache_write: 30, reasoning: null });
    expect(firstMs).toBeLessThan(5_000);
  });

  it('a client that goes away mid-stream aborts the upstream request; what arrived is accounted', async () => {
    const upstreamClosed = deferred();
    const { gateway, samples } = await setup((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(MESSAGE_START);
      res.on('close', () => upstreamClosed.resolve()); // never ended by the upstream itself
    });
    const abort = new AbortController();
    const res = await post(gateway, gateway.mint('run-abort', 'u', 60), undefined, abort.signal);
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    await upstreamClosed.promise; // would hang (and time out) if the gateway kept the upstream request
    await expect.poll(() => samples.length).toBe(1);
    // message_start's prompt-side classes count; output is unknown without message_delta.
    expect(samples[0]!.sample.tokens).toMatchObject({ input: 10, cache_read: 20, cache_write: 30, output: null });
    expect(await gateway.metrics.metrics()).toMatch(/tcab_gateway_requests_total\{provider="anthropic",outcome="client_closed"\} 1/);
  });

  it('an upstream that breaks mid-stream breaks the client response (not a clean end)', async () => {
    const { gateway } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(MESSAGE_START, () => setTimeout(() => res.destroy(), 20));
    });
    const res = await post(gateway, gateway.mint('run-cut', 'u', 60));
    await expect(res.text()).rejects.toThrow(/terminated/);
  });

  it('large bodies pass byte for byte both ways', async () => {
    const requestBody = randomBytes(3 * 1024 * 1024).toString('base64');
    const responseBody = randomBytes(8 * 1024 * 1024);
    let received = '';
    const { gateway } = await setup((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        received = Buffer.concat(parts).toString();
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(responseBody);
      });
    });
    const res = await post(gateway, gateway.mint('run-big', 'u', 60), requestBody);
    expect(Buffer.from(await res.arrayBuffer()).equals(responseBody)).toBe(true);
    expect(received).toBe(requestBody);
  });
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}
function raw(url: string, path: string, headers: OutgoingHttpHeaders, body = '{}'): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'POST', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('gateway: headers', () => {
  it('hop-by-hop headers stay on their hop, both ways; the others pass', async () => {
    let seen: IncomingHttpHeaders = {};
    const { gateway, upstream } = await setup((req, res) => {
      seen = req.headers;
      res.setHeader('connection', 'x-up-drop');
      res.setHeader('x-up-drop', '1');
      res.setHeader('keep-alive', 'timeout=99');
      res.setHeader('proxy-authenticate', 'Basic realm="x"');
      res.setHeader('x-up-keep', '1');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const res = await raw(gateway.url, '/p/anthropic/v1/messages', {
      'x-api-key': gateway.mint('run-h', 'u', 60),
      'content-type': 'application/json',
      connection: 'keep-alive, x-drop-me',
      'x-drop-me': '1',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      trailer: 'x-foo',
      'proxy-authorization': 'Basic Zm9vOmJhcg==',
      'proxy-connection': 'keep-alive',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'x,y',
      'x-keep-me': 'yes',
    });
    expect(res.status).toBe(200);
    for (const name of ['x-drop-me', 'keep-alive', 'te', 'trailer', 'proxy-authorization', 'proxy-connection']) expect(seen).not.toHaveProperty(name);
    expect(seen).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'x,y', 'x-keep-me': 'yes', 'x-api-key': REAL_KEYS.anthropic });
    expect(seen.host).toBe(new URL(upstream.url).host); // the upstream's, not the gateway's
    expect(res.headers).not.toHaveProperty('x-up-drop');
    expect(res.headers).not.toHaveProperty('proxy-authenticate');
    expect(res.headers['keep-alive']).not.toBe('timeout=99');
    expect(res.headers['x-up-keep']).toBe('1');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.body.toString()).toBe('{"ok":true}');
  });

  it('a gzip body reaches the client compressed, byte for byte, and is metered decoded', async () => {
    const json = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 6, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    const gz = gzipSync(json);
    const { gateway, samples } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gz.length });
      res.end(gz);
    });
    const res = await raw(gateway.url, '/p/anthropic/v1/messages', { 'x-api-key': gateway.mint('run-gz', 'u', 60), 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.body.equals(gz)).toBe(true);
    await expect.poll(() => samples.length).toBe(1);
    expect(samples[0]!.sample.tokens).toMatchObject({ input: 5, output: 6 });
  });
});

describe('gateway: throttles', () => {
  it('429 and 529 answers and an overloaded error inside a stream are counted per provider and model, with retry-after', async () => {
    let n = 0;
    const { gateway } = await setup((req, res) => {
      n += 1;
      if (n === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}');
      } else if (n === 2) {
        res.writeHead(529, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(MESSAGE_START + sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      }
    });
    const token = gateway.mint('run-t', 'u', 60);
    const first = await post(gateway, token, '{"model":"claude-opus-4-1","messages":[]}');
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    expect(await first.json()).toMatchObject({ error: { type: 'rate_limit_error' } });
    expect((await post(gateway, token, '{"model":"claude-opus-4-1","messages":[]}')).status).toBe(529);
    await (await post(gateway, token)).text();
    await expect.poll(() => gateway.usage('run-t', 'u')?.requests).toBe(3);
    const account = gateway.usage('run-t', 'u')!;
    expect(account.statuses).toEqual({ '429': 1, '529': 1, '200': 1 });
    expect(account.throttles).toEqual([
      { provider: 'anthropic', model: 'claude-opus-4-1', status: 429, count: 1, retry_after_s: 7 },
      { provider: 'anthropic', model: 'claude-opus-4-1', status: 529, count: 1, retry_after_s: null },
      { provider: 'anthropic', model: 'claude-sonnet-4-5', status: 529, count: 1, retry_after_s: null },
    ]);
    const metrics = await gateway.metrics.metrics();
    expect(metrics).toContain('tcab_gateway_throttles_total{provider="anthropic",model="claude-opus-4-1",status="429"} 1');
    expect(metrics).toContain('tcab_gateway_throttles_total{provider="anthropic",model="claude-sonnet-4-5",status="529"} 1');
  });
});
