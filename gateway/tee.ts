// The metering side of a response: the bytes the client was already sent, decoded (gzip, deflate, br, zstd) when
// the provider compressed them, fed to the usage meter of gateway/usage/. Nothing here can hold up or break the
// client's stream: chunks are pushed after they were written to it, decoding runs on zlib's own pace, and a meter
// that throws is dropped (the response then counts as unmetered).
import { constants, createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { WireProtocol, WireSample } from '../shared/gateway.ts';
import type { UsageMeter, UsageMeterOptions } from './usage/index.ts';

/** The usage meter (gateway/usage/ usageMeter): bytes of one response in, one WireSample out. */
export type UsageMeterFactory = (protocol: WireProtocol, options: UsageMeterOptions) => UsageMeter;

export interface TeeResult {
  sample: WireSample;
  /** Anthropic's `overloaded_error` arrived inside a 2xx event stream. */
  overloaded: boolean;
  /** Why the response could not be metered (undefined: it was, or its route is not metered). */
  problem?: string;
}

const OVERLOADED = Buffer.from('overloaded_error');

function decoderFor(encoding: string): Transform | undefined {
  // Sync flush at the end: a stream cut short still yields what arrived.
  const zlibOptions = { finishFlush: constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip(zlibOptions);
    case 'deflate':
      return createInflate(zlibOptions);
    case 'br':
      return createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH });
    case 'zstd':
      return createZstdDecompress();
    default:
      return undefined;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return (Array.isArray(v) ? v.join(', ') : (v ?? '')).trim();
}

export interface ResponseTee {
  push(chunk: Buffer): void;
  /** The response ended (or was cut short): the sample. */
  finish(): Promise<TeeResult>;
}

/** A tee for one response; `protocol` null = not metered (the sample then has no tokens). */
export function responseTee(input: {
  protocol: WireProtocol | null;
  fallbackProtocol: WireProtocol;
  status: number;
  headers: IncomingHttpHeaders;
  /** The model the request named (the sample's when the response names none). */
  requestModel: string | null;
  meter: UsageMeterFactory;
}): ResponseTee {
  const contentType = header(input.headers, 'content-type');
  const streamed = contentType.toLowerCase().includes('text/event-stream');
  const scanOverload = streamed && input.status >= 200 && input.status < 300;
  let overloaded = false;
  let tail = Buffer.alloc(0);
  let problem: string | undefined;
  let meter: UsageMeter | undefined;
  if (input.protocol !== null) {
    try {
      meter = input.meter(input.protocol, { contentType, status: input.status, requestModel: input.requestModel });
    } catch (error) {
      problem = `the usage meter failed to start: ${String(error)}`;
    }
  }

  const feed = (bytes: Buffer): void => {
    if (scanOverload && !overloaded) {
      const window = tail.length > 0 ? Buffer.concat([tail, bytes]) : bytes;
      if (window.includes(OVERLOADED)) overloaded = true;
      tail = Buffer.from(window.subarray(Math.max(0, window.length - OVERLOADED.length + 1)));
    }
    if (!meter) return;
    try {
      meter.push(bytes);
    } catch (error) {
      meter = undefined;
      problem = `the usage meter failed: ${String(error)}`;
    }
  };

  const encoding = header(input.headers, 'content-encoding').toLowerCase();
  let decoder: Transform | undefined;
  let decoded: Promise<void> | undefined;
  if (meter || scanOverload) {
    if (encoding !== '' && encoding !== 'identity') {
      decoder = decoderFor(encoding);
      if (!decoder) {
        meter = undefined;
        problem = `content-encoding "${encoding.slice(0, 40)}" cannot be decoded for metering`;
      } else {
        decoder.on('data', feed);
        decoded = new Promise<void>((resolve) => {
          decoder!.once('end', resolve);
          decoder!.on('error', (error) => {
            problem ??= `the response body did not decode (${encoding}): ${error.message}`;
            resolve();
          });
        });
      }
    }
  }

  const sampleOf = (): WireSample => {
    const fallback: WireSample = { protocol: input.protocol ?? input.fallbackProtocol, model: input.requestModel, status: input.status, streamed, tokens: null };
    if (!meter) return fallback;
    try {
      return meter.end();
    } catch (error) {
      problem = `the usage meter failed: ${String(error)}`;
      return fallback;
    }
  };

  return {
    push(chunk) {
      if (decoder) {
        if (!decoder.destroyed) decoder.write(chunk);
      }
      else if (meter || scanOverload) feed(chunk);
    },
    async finish() {
      if (decoder && decoded) {
        if (!decoder.destroyed) decoder.end();
        await decoded;
      }
      const sample = sampleOf();
      return problem === undefined ? { sample, overloaded } : { sample, overloaded, problem };
    },
  };
}
