// One request's way through the gateway once it is admitted (server.ts checked its token and budget): forwarded
// with undici, the token swapped for the real key, the body unchanged both ways, the response streamed through as
// it arrives (each chunk written to the client before the meter reads it), the upstream's status and headers
// passed on minus hop-by-hop ones. It knows nothing of accounts: it reports what it measured to `done`.
//
// Error answers (4xx/5xx, not a stream) are the one thing held back: up to HELD_ERROR_BYTES, to be checked for a
// real key a provider might echo (their bodies are small, and nothing is waiting on the first byte of an error).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
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
import type { UsageMeterFactory } from './tee.ts';

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
  const { provider } = target;
  const { metrics, log, secrets } = ctx;
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // A body of a known, small length is read whole and sent in one write with the head (a model API reads the
  // whole body before it answers, so nothing is lost by not streaming it); any other body streams through.
  const declared = Number(req.headers['content-length']);
  const buffered = hasBody && req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared <= BUFFERED_BODY_BYTES;
  const wantsHead = hasBody && target.protocol !== null && target.protocol !== 'gemini';
  const capture = wantsHead && !buffered ? new HeadCapture() : undefined;
  let whole: Buffer | undefined;
  const bodyHead = () => (whole ? whole.subarray(0, BODY_HEAD_BYTES).toString('utf8') : (capture?.head() ?? ''));
  let controller: Dispatcher.DispatchController | undefined;
  let clientGone = false;
  let finished = false;
  let t1 = 0;
  let bodyWait = 0;
  let tee: ReturnType<typeof responseTee> | undefined;
  let status = 0;
  let retryAfterS: number | null = null;
  let bodyStarted = false;
  let held: { parts: Buffer[]; length: number; headers: OutgoingHttpHeaders; encoding: string } | undefined;

  /** Chunks written to the client, not yet given to the meter. */
  let toMeter: Buffer[] = [];
  let flushScheduled = false;
  const flushWrites = () => {
    if (flushScheduled) {
      flushScheduled = false;
      if (res.writableCorked > 0) res.uncork(); // end() uncorks by itself
    }
    const chunks = toMeter;
    toMeter = [];
    for (const chunk of chunks) tee?.push(chunk);
  };

  const settle = async (outcome: RequestOutcome) => {
    if (finished) return;
    finished = true;
    metrics.request(provider.name, outcome);
    flushWrites();
    if (!tee) return done({ outcome });
    const result = await tee.finish();
    done({ outcome, measured: { status, sample: result.sample, overloaded: result.overloaded, retryAfterS, ...(result.problem === undefined ? {} : { problem: scrub(result.problem, secrets) }) } });
  };

  const flushHeld = () => {
    if (!held) return;
    const { parts, headers, encoding } = held;
    held = undefined;
    let bytes = Buffer.concat(parts);
    const plain = secrets.length > 0 ? decodeForScan(bytes, encoding) : undefined;
    if (plain && secrets.some((s) => plain.includes(s))) {
      // The provider echoed a key: the client gets the body without it (decoded, so its length changes).
      bytes = Buffer.from(scrub(plain.toString('utf8'), secrets));
      delete headers['content-encoding'];
      log.warn({ provider: provider.name, run, status }, 'gateway: an error answer held a provider key; it was redacted');
    }
    headers['content-length'] = String(bytes.length);
    res.writeHead(status, headers);
    res.end(bytes);
  };

  res.once('close', () => {
    if (res.writableFinished) return;
    clientGone = true;
    controller?.abort(new ClientClosed('the client closed the connection'));
    void settle('client_closed');
  });

  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      if (clientGone) c.abort(new ClientClosed('the client closed the connection'));
    },
    onResponseStart(c, statusCode, headers) {
      const t2 = performance.now();
      controller = c;
      status = statusCode;
      metrics.upstreamStatus(provider.name, statusCode);
      retryAfterS = isThrottle(statusCode, false) ? retryAfterSeconds(headers, ctx.clock()) : null;
      // The provider answers once it has read the request, so the body's head is in by now.
      const named = target.protocol ? requestModel(target.protocol, target.path, bodyHead()) : null;
      tee = responseTee({ protocol: target.protocol, fallbackProtocol: provider.protocol, status: statusCode, headers, requestModel: named, meter: ctx.meter });
      const out = clientHeaders(headers, secrets);
      const contentType = String(headers['content-type'] ?? '');
      if (statusCode >= 400 && !contentType.includes('text/event-stream') && method !== 'HEAD') {
        delete out['content-length'];
        held = { parts: [], length: 0, headers: out, encoding: String(headers['content-encoding'] ?? '').trim().toLowerCase() };
      } else {
        res.writeHead(statusCode, out);
        // A head goes with the first bytes of the body, in one write; a stream whose first event is not in the
        // same read gets its head at once (the client sees the answer start before the first event).
        if (contentType.includes('text/event-stream')) {
          setImmediate(() => {
            if (!bodyStarted && !finished && !res.destroyed) res.flushHeaders();
          });
        }
      }
      metrics.addedLatency(provider.name, (t1 - t0 - bodyWait + performance.now() - t2) / 1000);
    },
    onResponseData(c, chunk) {
      if (finished) return;
      if (held) {
        held.parts.push(chunk);
        held.length += chunk.length;
        if (held.length > HELD_ERROR_BYTES) {
          // Too long to be an error message worth scanning: sent on as it is.
          const { parts, headers } = held;
          held = undefined;
          res.writeHead(status, headers);
          for (const part of parts) res.write(part);
        }
        tee?.push(chunk);
        return;
      }
      bodyStarted = true;
      // Chunks parsed in one tick (a small body and its end, a burst of events) leave in one write, and the meter
      // reads them after they left.
      if (!flushScheduled) {
        flushScheduled = true;
        res.cork();
        process.nextTick(flushWrites);
      }
      if (!res.write(chunk)) {
        c.pause();
        res.once('drain', () => c.resume());
      }
      toMeter.push(chunk);
    },
    onResponseEnd() {
      flushHeld();
      res.end();
      flushWrites();
      void settle('forwarded');
    },
    onResponseError(_c, error) {
      if (clientGone || error instanceof ClientClosed) {
        void settle('client_closed');
        return;
      }
      log.warn({ provider: provider.name, run, err: scrub(`${error.name}: ${error.message}`, secrets) }, 'gateway: the upstream request failed');
      if (!res.headersSent && !held && !tee) {
        writeAnswer(res, gatewayError(provider.protocol, 'upstream_unreachable', `tcab model gateway: ${provider.name} could not be reached (${scrub(error.message, secrets)})`));
        void settle('upstream_error');
        return;
      }
      // Cut short after the head: the client must see a broken response, not a complete one.
      held = undefined;
      res.destroy();
      void settle('upstream_error');
    },
  };

  const dispatch = (body: Buffer | Readable | null) => {
    if (clientGone) return;
    t1 = performance.now();
    ctx.dispatcher.dispatch({ origin: provider.origin, path: upstreamPath(target), method, headers: upstreamHeaders(req.rawHeaders, provider, realKey), body }, handler);
  };
  if (!hasBody) return dispatch(null);
  if (buffered) {
    const waitFrom = performance.now();
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.once('end', () => {
      bodyWait = performance.now() - waitFrom;
      whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      dispatch(whole);
    });
    // A client gone mid-upload: 'end' never comes, the close handler above settles the request.
    req.once('error', () => undefined);
    return;
  }
  if (capture) {
    req.pipe(capture);
    // A client gone mid-upload: the body stream errors, and undici aborts the upstream request.
    req.once('error', (error) => capture.destroy(error));
    req.once('close', () => {
      if (!req.complete) capture.destroy(new ClientClosed('the client closed the request'));
    });
  }
  dispatch(capture ?? req);
}
