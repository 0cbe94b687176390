// One request's way through the gateway once it is admitted (server.ts checked its token and budget): forwarded
// with undici, the token swapped for the real key, the body unchanged both ways, the response streamed through as
// it arrives (each chunk written to the client before the meter reads it), the upstream's status and headers
// passed on minus hop-by-hop ones. It knows nothing of accounts: it reports what it measured to `done`.
//
// Error answers (4xx/5xx, not a stream) are the one thing held back: up to HELD_ERROR_BYTES, to be checked for a
// real key a provider might echo (their bodies are small, and nothing is waiting on the first byte of an error).
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { WireSample } from '../shared/gateway.ts';
import type { Logger } from '../shared/log.ts';
import { clientHeaders, requestModel, scrub, upstreamHeaders, upstreamPath } from './request.ts';
import type { Target } from './request.ts';
import type { GatewayAnswer } from './errors.ts';
import { gatewayError } from './errors.ts';
import { isThrottle, retryAfterSeconds } from './account.ts';
import type { GatewayMetrics, RequestOutcome } from './metrics.ts';
import { responseTee } from './tee.ts';
import type { ResponseTee, UsageMeterFactory } from './tee.ts';

export type GatewayLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Error answers are held (up to this many bytes) to be checked for a real key before they go to the client. */
const HELD_ERROR_BYTES = 256 * 1024;
/** The head of a request body kept to read its model from. */
const BODY_HEAD_BYTES = 16 * 1024;
/** Request bodies of a declared length up to this are read whole before they are forwarded; longer ones stream. */
const BUFFERED_BODY_BYTES = 256 * 1024;

export interface ForwardContext {
  dispatcher: Dispatcher;
  meter: UsageMeterFactory;
  /** The real keys: never sent back, never logged. */
  secrets: readonly string[];
  metrics: GatewayMetrics;
  log: GatewayLogger;
  clock: () => number;
}

/** What became of a forwarded request. */
export interface Forwarded {
  outcome: RequestOutcome;
  /** The provider's answer as measured; undefined when none came (unreachable, or the client left first). */
  measured?: { status: number; sample: WireSample; overloaded: boolean; retryAfterS: number | null; problem?: string };
}

export class ClientClosed extends Error {
  override name = 'ClientClosed';
}

/** Sends one of the gateway's own answers (or breaks the response if its head already left). */
export function writeAnswer(res: ServerResponse, reply: GatewayAnswer): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) });
  res.end(reply.body);
}

/** Keeps the first bytes of a request body while passing every chunk on unchanged. */
class HeadCapture extends Transform {
  readonly parts: Buffer[] = [];
  length = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null, data?: Buffer) => void): void {
    if (this.length < BODY_HEAD_BYTES) {
      this.parts.push(chunk.subarray(0, BODY_HEAD_BYTES - this.length));
      this.length += Math.min(chunk.length, BODY_HEAD_BYTES - this.length);
    }
    callback(null, chunk);
  }
  head(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

function decodeForScan(body: Buffer, encoding: string): Buffer | undefined {
  const limit = { maxOutputLength: 4 * HELD_ERROR_BYTES };
  try {
    switch (encoding) {
      case '':
      case 'identity':
        return body;
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(body, limit);
      case 'deflate':
        return inflateSync(body, limit);
      case 'br':
        return brotliDecompressSync(body, limit);
      case 'zstd':
        return zstdDecompressSync(body, limit);
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/**
 * Forwards an admitted request. `t0` is when it arrived (for the added-latency metric); `run` only labels log
 * lines; `done` is called once, when the response ended, broke, or the client left.
 */
export function forward(ctx: ForwardContext, req: IncomingMessage, res: ServerResponse, target: Target, realKey: string, t0: number, run: string, done: (forwarded: Forwarded) => void): void {
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // A body of a known, small length is read whole and sent in one write with the head (a model API reads the
  // whole body before it answers, so nothing is lost by not streaming it); any other body streams through.
  const declared = Number(req.headers['content-length']);
  const buffered = hasBody && req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared <= BUFFERED_BODY_BYTES;
  const wantsHead = hasBody && target.protocol !== null && target.protocol !== 'gemini';
  const capture = wantsHead && !buffered ? new HeadCapture() : undefined;
  const exchange = new Exchange({ ctx, req, res, target, realKey, t0, run, done, method, capture });
  res.once('close', () => exchange.clientClosed());
  if (!hasBody) return exchange.dispatch(null);
  if (buffered) return readWhole(req, (whole, waitMs) => exchange.dispatchWhole(whole, waitMs));
  if (capture) streamThrough(req, capture);
  exchange.dispatch(capture ?? req);
}

/** Reads a request body whole, then hands it on with how long it took to arrive (ms). */
function readWhole(req: IncomingMessage, then: (whole: Buffer, waitMs: number) => void): void {
  const waitFrom = performance.now();
  const parts: Buffer[] = [];
  req.on('data', (chunk: Buffer) => parts.push(chunk));
  req.once('end', () => {
    const waitMs = performance.now() - waitFrom;
    then(parts.length === 1 ? parts[0]! : Buffer.concat(parts), waitMs);
  });
  // A client gone mid-upload: 'end' never comes, the response's close (Exchange.clientClosed) settles the request.
  req.once('error', () => undefined);
}

/** Streams a request body through `capture` to the upstream. */
function streamThrough(req: IncomingMessage, capture: HeadCapture): void {
  req.pipe(capture);
  // A client gone mid-upload: the body stream errors, and undici aborts the upstream request.
  req.once('error', (error) => capture.destroy(error));
  req.once('close', () => {
    if (!req.complete) capture.destroy(new ClientClosed('the client closed the request'));
  });
}

interface ExchangeInput {
  ctx: ForwardContext;
  req: IncomingMessage;
  res: ServerResponse;
  target: Target;
  realKey: string;
  t0: number;
  run: string;
  done: (forwarded: Forwarded) => void;
  method: string;
  /** Where a streamed body's head is kept (undefined: the body is read whole, or its model is not read). */
  capture: HeadCapture | undefined;
}

/** An error answer held back to be checked for a real key before it goes to the client. */
interface HeldAnswer {
  parts: Buffer[];
  length: number;
  headers: OutgoingHttpHeaders;
  encoding: string;
}

/** One admitted request upstream and its answer back: undici's handler, the client's response, the meter's tee. */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly input: ExchangeInput;
  private controller: Dispatcher.DispatchController | undefined;
  private clientGone = false;
  private finished = false;
  /** When the request was dispatched (performance.now()), and how long its body took to arrive (ms). */
  private dispatchedAt = 0;
  private bodyWait = 0;
  /** The body, when it was read whole. */
  private whole: Buffer | undefined;
  private tee: ResponseTee | undefined;
  private status = 0;
  private retryAfterS: number | null = null;
  private bodyStarted = false;
  private held: HeldAnswer | undefined;
  /** Chunks written to the client, not yet given to the meter. */
  private toMeter: Buffer[] = [];
  private flushScheduled = false;

  constructor(input: ExchangeInput) {
    this.input = input;
  }

  /** Sends the request upstream (unless the client already left). */
  dispatch(body: Buffer | Readable | null): void {
    if (this.clientGone) return;
    this.dispatchedAt = performance.now();
    const { ctx, req, target, realKey, method } = this.input;
    const { provider } = target;
    ctx.dispatcher.dispatch({ origin: provider.origin, path: upstreamPath(target), method, headers: upstreamHeaders(req.rawHeaders, provider, realKey), body }, this);
  }

  /** A body read whole, `waitMs` after the request arrived. */
  dispatchWhole(whole: Buffer, waitMs: number): void {
    this.bodyWait = waitMs;
    this.whole = whole;
    this.dispatch(whole);
  }

  /** The client's response closed: unless it had finished, the client left. */
  clientClosed(): void {
    if (this.input.res.writableFinished) return;
    this.clientGone = true;
    this.controller?.abort(new ClientClosed('the client closed the connection'));
    void this.settle('client_closed');
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.clientGone) c.abort(new ClientClosed('the client closed the connection'));
  }

  onResponseStart(c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    const t2 = performance.now();
    const { ctx, target, t0 } = this.input;
    const { provider } = target;
    this.controller = c;
    this.status = statusCode;
    ctx.metrics.upstreamStatus(provider.name, statusCode);
    this.retryAfterS = isThrottle(statusCode, false) ? retryAfterSeconds(headers, ctx.clock()) : null;
    // The provider answers once it has read the request, so the body's head is in by now.
    const named = target.protocol ? requestModel(target.protocol, target.path, this.bodyHead()) : null;
    this.tee = responseTee({ protocol: target.protocol, fallbackProtocol: provider.protocol, status: statusCode, headers, requestModel: named, meter: ctx.meter });
    this.startAnswer(statusCode, headers);
    ctx.metrics.addedLatency(provider.name, (this.dispatchedAt - t0 - this.bodyWait + performance.now() - t2) / 1000);
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.held) return this.hold(this.held, chunk);
    const { res } = this.input;
    this.bodyStarted = true;
    // Chunks parsed in one tick (a small body and its end, a burst of events) leave in one write, and the meter
    // reads them after they left.
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      res.cork();
      process.nextTick(this.flushWrites);
    }
    if (!res.write(chunk)) {
      c.pause();
      res.once('drain', () => c.resume());
    }
    this.toMeter.push(chunk);
  }

  onResponseEnd(): void {
    this.flushHeld();
    this.input.res.end();
    this.flushWrites();
    void this.settle('forwarded');
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    if (this.clientGone || error instanceof ClientClosed) {
      void this.settle('client_closed');
      return;
    }
    const { ctx, res, target, run } = this.input;
    const { provider } = target;
    ctx.log.warn({ provider: provider.name, run, err: scrub(`${error.name}: ${error.message}`, ctx.secrets) }, 'gateway: the upstream request failed');
    if (!res.headersSent && !this.held && !this.tee) {
      writeAnswer(res, gatewayError(provider.protocol, 'upstream_unreachable', `tcab model gateway: ${provider.name} could not be reached (${scrub(error.message, ctx.secrets)})`));
      void this.settle('upstream_error');
      return;
    }
    // Cut short after the head: the client must see a broken response, not a complete one.
    this.held = undefined;
    res.destroy();
    void this.settle('upstream_error');
  }

  /** The head of the request body, to read its model from. */
  private bodyHead(): string {
    const { whole } = this;
    return whole ? whole.subarray(0, BODY_HEAD_BYTES).toString('utf8') : (this.input.capture?.head() ?? '');
  }

  /** The client's answer starts: an error answer is held back (flushHeld), anything else passed on as it comes. */
  private startAnswer(statusCode: number, headers: IncomingHttpHeaders): void {
    const { ctx, res, method } = this.input;
    const out = clientHeaders(headers, ctx.secrets);
    const contentType = String(headers['content-type'] ?? '');
    if (statusCode >= 400 && !contentType.includes('text/event-stream') && method !== 'HEAD') {
      delete out['content-length'];
      this.held = { parts: [], length: 0, headers: out, encoding: String(headers['content-encoding'] ?? '').trim().toLowerCase() };
      return;
    }
    res.writeHead(statusCode, out);
    // A head goes with the first bytes of the body, in one write; a stream whose first event is not in the
    // same read gets its head at once (the client sees the answer start before the first event).
    if (contentType.includes('text/event-stream')) {
      setImmediate(() => {
        if (!this.bodyStarted && !this.finished && !res.destroyed) res.flushHeaders();
      });
    }
  }

  /** A chunk of a held error answer. */
  private hold(held: HeldAnswer, chunk: Buffer): void {
    held.parts.push(chunk);
    held.length += chunk.length;
    if (held.length > HELD_ERROR_BYTES) {
      // Too long to be an error message worth scanning: sent on as it is.
      const { res } = this.input;
      const { parts, headers } = held;
      this.held = undefined;
      res.writeHead(this.status, headers);
      for (const part of parts) res.write(part);
    }
    this.tee?.push(chunk);
  }

  /** The held error answer goes to the client, any real key in it redacted. */
  private flushHeld(): void {
    if (!this.held) return;
    const { ctx, res, target, run } = this.input;
    const { secrets } = ctx;
    const { parts, headers, encoding } = this.held;
    this.held = undefined;
    let bytes = Buffer.concat(parts);
    const plain = secrets.length > 0 ? decodeForScan(bytes, encoding) : undefined;
    if (plain && secrets.some((s) => plain.includes(s))) {
      // The provider echoed a key: the client gets the body without it (decoded, so its length changes).
      bytes = Buffer.from(scrub(plain.toString('utf8'), secrets));
      delete headers['content-encoding'];
      ctx.log.warn({ provider: target.provider.name, run, status: this.status }, 'gateway: an error answer held a provider key; it was redacted');
    }
    headers['content-length'] = String(bytes.length);
    res.writeHead(this.status, headers);
    res.end(bytes);
  }

  /** The writes of this tick leave (uncorked), and the meter reads them; bound once, for process.nextTick. */
  private readonly flushWrites = (): void => {
    if (this.flushScheduled) {
      this.flushScheduled = false;
      if (this.input.res.writableCorked > 0) this.input.res.uncork(); // end() uncorks by itself
    }
    const chunks = this.toMeter;
    this.toMeter = [];
    for (const chunk of chunks) this.tee?.push(chunk);
  };

  /** The request is over: counted once, and what was measured goes to `done`. */
  private async settle(outcome: RequestOutcome): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const { ctx, target, done } = this.input;
    ctx.metrics.request(target.provider.name, outcome);
    this.flushWrites();
    const { tee } = this;
    if (!tee) return done({ outcome });
    const result = await tee.finish();
    const { status, retryAfterS } = this;
    done({ outcome, measured: { status, sample: result.sample, overloaded: result.overloaded, retryAfterS, ...(result.problem === undefined ? {} : { problem: scrub(result.problem, ctx.secrets) }) } });
  }
}
