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

interface ResponseTeeInput {
  protocol: WireProtocol | null;
  fallbackProtocol: WireProtocol;
  status: number;
  headers: IncomingHttpHeaders;
  /** The model the request named (the sample's when the response names none). */
  requestModel: string | null;
  meter: UsageMeterFactory;
}

/** A tee for one response; `protocol` null = not metered (the sample then has no tokens). */
export function responseTee(input: ResponseTeeInput): ResponseTee {
  return new Tee(input);
}

class Tee implements ResponseTee {
  private readonly input: ResponseTeeInput;
  private readonly streamed: boolean;
  /** A 2xx event stream is scanned for Anthropic's overloaded_error. */
  private readonly scanOverload: boolean;
  private overloaded = false;
  /** The last bytes scanned for OVERLOADED: it may be cut across two chunks. */
  private tail = Buffer.alloc(0);
  private problem: string | undefined;
  /** Dropped (undefined) once it failed: the response then counts as unmetered. */
  private meter: UsageMeter | undefined;
  private decoder: Transform | undefined;
  /** Settles when the decoder has given all it will. */
  private decoded: Promise<void> | undefined;

  constructor(input: ResponseTeeInput) {
    this.input = input;
    const contentType = header(input.headers, 'content-type');
    this.streamed = contentType.toLowerCase().includes('text/event-stream');
    this.scanOverload = this.streamed && input.status >= 200 && input.status < 300;
    if (input.protocol !== null) this.startMeter(input.protocol, contentType);
    const encoding = header(input.headers, 'content-encoding').toLowerCase();
    if ((this.meter || this.scanOverload) && encoding !== '' && encoding !== 'identity') this.startDecoder(encoding);
  }

  push(chunk: Buffer): void {
    if (this.decoder) {
      if (!this.decoder.destroyed) this.decoder.write(chunk);
    } else if (this.meter || this.scanOverload) this.feed(chunk);
  }

  async finish(): Promise<TeeResult> {
    if (this.decoder && this.decoded) {
      if (!this.decoder.destroyed) this.decoder.end();
      await this.decoded;
    }
    const sample = this.sampleOf();
    const { overloaded, problem } = this;
    return problem === undefined ? { sample, overloaded } : { sample, overloaded, problem };
  }

  private startMeter(protocol: WireProtocol, contentType: string): void {
    try {
      this.meter = this.input.meter(protocol, { contentType, status: this.input.status, requestModel: this.input.requestModel });
    } catch (error) {
      this.problem = `the usage meter failed to start: ${String(error)}`;
    }
  }

  /** A compressed body reaches the meter (and the overload scan) through a decoder. */
  private startDecoder(encoding: string): void {
    const decoder = decoderFor(encoding);
    if (!decoder) {
      this.meter = undefined;
      this.problem = `content-encoding "${encoding.slice(0, 40)}" cannot be decoded for metering`;
      return;
    }
    this.decoder = decoder;
    decoder.on('data', (bytes: Buffer) => this.feed(bytes));
    this.decoded = new Promise<void>((resolve) => {
      decoder.once('end', resolve);
      decoder.on('error', (error) => {
        this.problem ??= `the response body did not decode (${encoding}): ${error.message}`;
        resolve();
      });
    });
  }

  /** Plain bytes of the body, in order. */
  private feed(bytes: Buffer): void {
    if (this.scanOverload && !this.overloaded) {
      const window = this.tail.length > 0 ? Buffer.concat([this.tail, bytes]) : bytes;
      if (window.includes(OVERLOADED)) this.overloaded = true;
      this.tail = Buffer.from(window.subarray(Math.max(0, window.length - OVERLOADED.length + 1)));
    }
    if (!this.meter) return;
    try {
      this.meter.push(bytes);
    } catch (error) {
      this.meter = undefined;
      this.problem = `the usage meter failed: ${String(error)}`;
    }
  }

  private sampleOf(): WireSample {
    const { input } = this;
    const fallback: WireSample = { protocol: input.protocol ?? input.fallbackProtocol, model: input.requestModel, status: input.status, streamed: this.streamed, tokens: null };
    if (!this.meter) return fallback;
    try {
      return this.meter.end();
    } catch (error) {
      this.problem = `the usage meter failed: ${String(error)}`;
      return fallback;
    }
  }
}
