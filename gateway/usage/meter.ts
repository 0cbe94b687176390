// The gateway's usage meter: one per response, fed the body's bytes as they stream through to the harness, and
// asked for the WireSample once the body has ended (or was cut). Pure: no I/O, no clock.
//
// The body's first byte that is not whitespace (after a UTF-8 BOM) decides its form, whatever Content-Type says:
// `{` or `[` is one JSON value (a body, or Gemini's streamed JSON array), anything else is text/event-stream. The
// Content-Type only tells an empty body's `streamed`. Bodies of 4xx/5xx (and any status outside 2xx) are not read:
// their tokens are null, as WireSample says (the gateway counts 429/529 itself).
//
// Memory: the JSON scanner and the SSE reader hold no body, no line and no event, only the value at a usage path
// while it arrives (at most 64 KiB; a bigger one is dropped) plus fixed buffers. A response of any size, or an SSE
// data line of 50 MB, costs the same.
//
// Truncation (a body cut short, or malformed from some point on): every usage object that arrived whole before the
// cut counts, and nothing after the first syntax error of a JSON body or of an SSE event's data. A report that is
// not the response's final one keeps its prompt-side classes (input, cache_read, cache_write: final once
// reported) and leaves `output` and `reasoning` null: Anthropic's message_start without a message_delta; a Gemini
// or Chat Completions stream whose last whole usage came in a chunk before any finishReason / finish_reason (and,
// for Chat Completions, no [DONE]). OpenAI Responses reports usage only in its terminal event: cut before it,
// nothing. No usage at all is tokens: null. A number is never made up, summed across reports, or guessed.
import type { WireProtocol, WireSample } from '../../shared/gateway.ts';
import { WIRE_PROTOCOLS } from '../../shared/gateway.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { JsonScanner } from './json-scan.ts';
import type { JsonScanEnd } from './json-scan.ts';
import { SseReader } from './sse.ts';
import type { BodyEnd, WireReader } from './reader.ts';
import { readModel } from './reader.ts';
import { anthropicReader } from './anthropic.ts';
import { openaiResponsesReader } from './openai-responses.ts';
import { openaiChatReader } from './openai-chat.ts';
import { geminiReader } from './gemini.ts';

export interface UsageMeterOptions {
  /** The response's HTTP status (100-599); usage is read from 2xx responses only. */
  status: number;
  /** The response's Content-Type; only an empty body's `streamed` depends on it (text/event-stream). */
  contentType?: string | null;
  /** The model the request named: the sample's model when the response names none (an error, a cut stream). */
  requestModel?: string | null;
}

export interface UsageMeter {
  /** The next bytes of the (decoded, not content-encoded) body; cut anywhere. Never throws. */
  push(chunk: Uint8Array): void;
  /** The body ended or was cut: what it reported. Later pushes are ignored; calling again returns the same sample. */
  end(): WireSample;
}

const READERS: Record<WireProtocol, () => WireReader> = {
  anthropic: anthropicReader,
  'openai-responses': openaiResponsesReader,
  'openai-chat': openaiChatReader,
  gemini: geminiReader,
};

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const DONE = Buffer.from('[DONE]');
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

export function usageMeter(protocol: WireProtocol, options: UsageMeterOptions): UsageMeter {
  if (!(WIRE_PROTOCOLS as readonly string[]).includes(protocol)) throw new InvalidInputError('protocol', `is not a wire protocol (${WIRE_PROTOCOLS.join(', ')}), got ${JSON.stringify(protocol)}`);
  const { status } = options;
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new InvalidInputError('status', `must be an HTTP status (an integer 100-599), got ${String(status)}`);
  return new Meter(protocol, options);
}

class Meter implements UsageMeter {
  private readonly protocol: WireProtocol;
  private readonly status: number;
  private readonly contentType: string;
  private readonly requestModel: string | null;
  private readonly reader: WireReader;
  private readonly reading: boolean;

  private form: 'undecided' | 'json' | 'sse' = 'undecided';
  private bomMatched = 0;
  private bomDone = false;
  private broken = false;
  private sample: WireSample | undefined;

  private scanner: JsonScanner | undefined;
  private sse: SseReader | undefined;
  /** The current SSE event's data: its first bytes (to tell `[DONE]`) and its length. */
  private readonly eventHead = new Uint8Array(DONE.length);
  private eventBytes = 0;

  constructor(protocol: WireProtocol, options: UsageMeterOptions) {
    this.protocol = protocol;
    this.status = options.status;
    this.contentType = typeof options.contentType === 'string' ? options.contentType : '';
    this.requestModel = readModel(options.requestModel) ?? null;
    this.reader = READERS[protocol]();
    this.reading = options.status >= 200 && options.status < 300;
  }

  push(chunk: Uint8Array): void {
    if (!this.reading || this.broken || this.sample !== undefined || chunk.length === 0) return;
    try {
      this.feed(chunk);
    } catch {
      // Not expected (the parsers do not throw); the reports taken so far stand, the rest is not read.
      this.broken = true;
    }
  }

  end(): WireSample {
    if (this.sample !== undefined) return this.sample;
    let tokens: WireSample['tokens'] = null;
    let model: string | null = null;
    let body: BodyEnd = { form: 'empty', top: null, complete: false };
    try {
      if (this.reading) {
        body = this.finishBody();
        ({ tokens, model } = this.reader.finish(body));
      }
    } catch {
      tokens = null;
    }
    const streamed = body.form === 'sse' || body.top === 'array' || (body.form === 'empty' && /^\s*text\/event-stream\b/i.test(this.contentType));
    this.sample = { protocol: this.protocol, model: model ?? this.requestModel, status: this.status, streamed, tokens };
    return this.sample;
  }

  private feed(chunk: Uint8Array): void {
    if (this.form === 'json') return this.scanner!.push(chunk);
    if (this.form === 'sse') return this.sse!.push(chunk);
    let i = 0;
    if (!this.bomDone) {
      while (i < chunk.length && this.bomMatched < BOM.length && chunk[i] === BOM[this.bomMatched]) {
        this.bomMatched += 1;
        i += 1;
      }
      if (this.bomMatched < BOM.length && i === chunk.length) return; // maybe a BOM still
      this.bomDone = true;
      if (this.bomMatched < BOM.length && this.bomMatched > 0) {
        // Bytes that began like a BOM and were not one: text, so not JSON.
        this.decide('sse');
        this.sse!.push(BOM.subarray(0, this.bomMatched));
        return this.sse!.push(chunk.subarray(i));
      }
    }
    let j = i;
    while (j < chunk.length && isSpace(chunk[j]!)) j += 1;
    // Leading whitespace means nothing to JSON; to an event stream it is lines, so the SSE reader sees it.
    if (j > i) this.speculativeSse().push(chunk.subarray(i, j));
    if (j === chunk.length) return;
    const first = chunk[j]!;
    const form = first === 0x7b || first === 0x5b ? 'json' : 'sse';
    this.decide(form);
    if (form === 'json') this.scanner!.push(chunk.subarray(j));
    else this.sse!.push(chunk.subarray(j));
  }

  private speculativeSse(): SseReader {
    this.sse ??= new SseReader({ data: (buf, from, to) => this.eventData(buf, from, to), dispatch: () => this.eventEnd() });
    return this.sse;
  }

  private decide(form: 'json' | 'sse'): void {
    this.form = form;
    this.scanner = new JsonScanner(this.reader.paths, (path, value) => this.reader.value(path, value), undefined, () => this.reader.chunkEnd());
    if (form === 'sse') this.speculativeSse();
    else this.sse = undefined;
  }

  private eventData(buf: Uint8Array, from: number, to: number): void {
    for (let k = from; k < to && this.eventBytes + k - from < this.eventHead.length; k++) this.eventHead[this.eventBytes + k - from] = buf[k]!;
    this.eventBytes += to - from;
    this.scanner?.push(buf, from, to);
  }

  private eventEnd(): void {
    if (this.eventBytes === DONE.length && DONE.equals(this.eventHead)) this.reader.done();
    this.eventBytes = 0;
    this.scanner?.reset();
    this.reader.chunkEnd();
  }

  private finishBody(): BodyEnd {
    if (this.form === 'sse') {
      if (!this.broken) this.sse!.end();
      return { form: 'sse', top: null, complete: false };
    }
    if (this.form === 'json') {
      const end: JsonScanEnd = this.scanner!.end();
      return { form: 'json', top: end.top, complete: end.complete && !this.broken };
    }
    return { form: 'empty', top: null, complete: false };
  }
}
