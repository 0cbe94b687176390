// What the gateway's tests share (loopback only): real-looking fake keys, a captured logger, a provider table
// pointed at one upstream, and a tap that stands between the gateway and an upstream recording the exact bytes the
// upstream answered, so a test can compare them with what the client got.
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../shared/log.ts';
import type { Logger } from '../shared/log.ts';
import { providerConfigs } from './providers.ts';
import type { ProviderConfig } from './providers.ts';

/** Obviously fake, but shaped like each provider's keys. */
export const REAL_KEYS = Object.freeze({
  anthropic: 'sk-ant-fake-gateway-real-key',
  openai: 'sk-proj-fake-gateway-real-openai-key',
  google: 'AIzaFakeGatewayRealGoogleKey0000000000',
  openrouter: 'sk-or-v1-fake-gateway-real-openrouter-key',
  dashscope: 'sk-fake-gateway-real-dashscope-key',
});

export const SIGNING_KEY = Buffer.alloc(32, 0x5a);

/** A logger at debug level whose lines a test reads back. */
export function capturedLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ component: 'gateway-test', level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  return { log, lines };
}

/** Every default provider, its upstream replaced. */
export function providersAt(upstream: string): ProviderConfig[] {
  const at = { upstream };
  return providerConfigs({ anthropic: at, openai: at, google: at, openrouter: at, dashscope: at });
}

export interface TappedResponse {
  method: string;
  url: string;
  requestHeaders: IncomingHttpHeaders;
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Tap {
  url: string;
  responses: TappedResponse[];
  close(): Promise<void>;
}

/** A pass-through HTTP server in front of `target` that records each answer's bytes as the upstream sent them. */
export async function startTap(target: string): Promise<Tap> {
  const upstream = new URL(target);
  const responses: TappedResponse[] = [];
  const server: Server = createServer((req, res) => {
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const parts: Buffer[] = [];
      const record: TappedResponse = { method: req.method ?? '', url: req.url ?? '', requestHeaders: req.headers, status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.alloc(0) };
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        parts.push(chunk);
        res.write(chunk);
      });
      answer.on('end', () => {
        record.body = Buffer.concat(parts);
        responses.push(record);
        res.end();
      });
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    responses,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An upstream of the test's own making: `handle` answers each request. */
export async function startUpstream(handle: RequestListener): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
