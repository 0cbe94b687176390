// The stub model server: one loopback HTTP server speaking every wire a harness needs, routed by path, replaying
// a StubScript. Every request is recorded (headers included) so tests can see exactly what a harness sent.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StubScript } from '../../shared/stub-script.ts';
import type { StubScriptInput } from '../../shared/stub-script.ts';
import { keyFailure, selectStep, usageOf } from './conversation.ts';
import { anthropicError, anthropicJson, anthropicKey, anthropicSse, anthropicView } from './anthropic.ts';
import { responsesWire } from './openai-responses.ts';
import { chatWire, modelsWire } from './openai-chat.ts';
import { geminiWire } from './gemini.ts';
import type { Wire } from './wires.ts';

/** Wires beyond Anthropic's, matched in order. */
const WIRES: Wire[] = [responsesWire, chatWire, modelsWire, geminiWire];

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  wire: string;
  /** HTTP status the stub answered with. */
  status: number;
}

export interface StubModelServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  setScript(script: StubScriptInput): void;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export async function startStubModelServer(options: { script: StubScriptInput; host?: string; port?: number }): Promise<StubModelServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new Error(`the stub model server binds to loopback only, not ${host}`);
  let script = StubScript.parse(options.script);
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const body = await readBody(req);
      const headers = flatHeaders(req);
      const record: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body, wire: 'none', status: 200 };
      requests.push(record);
      const json = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;

      if ((req.method === 'HEAD' || req.method === 'GET') && url.pathname === '/') return send(res, 200, { ok: true });
      if (req.method === 'POST' && /^\/(v1\/)?messages\/count_tokens$/.test(url.pathname)) {
        record.wire = 'anthropic-messages';
        return send(res, 200, { input_tokens: 100 });
      }
      if (req.method === 'POST' && /^\/(v1\/)?messages$/.test(url.pathname)) {
        record.wire = 'anthropic-messages';
        const failure = keyFailure(anthropicKey(req.headers));
        const step = selectStep(script, anthropicView(json));
        const error = failure ?? step.error;
        if (error) {
          record.status = error.status;
          if ('retry_after_s' in error && error.retry_after_s !== undefined) res.setHeader('retry-after', String(error.retry_after_s));
          return send(res, error.status, anthropicError(error.status, error.message));
        }
        const model = typeof json.model === 'string' ? json.model : 'mock-model';
        if (json.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          return res.end(anthropicSse(step, usageOf(script, step), model));
        }
        return send(res, 200, anthropicJson(step, usageOf(script, step), model));
      }
      for (const wire of WIRES) {
        if (!wire.matches(req.method ?? 'GET', url.pathname)) continue;
        record.wire = wire.name;
        const answer = wire.answer({ script, body: json, headers, path: url.pathname, query: url.searchParams });
        record.status = answer.status;
        res.writeHead(answer.status, { 'content-type': answer.contentType, ...answer.headers });
        return res.end(answer.body);
      }
      record.status = 404;
      send(res, 404, { error: { message: `stub model server: no route for ${req.method} ${url.pathname}` } });
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    requests,
    setScript(next) {
      script = StubScript.parse(next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
