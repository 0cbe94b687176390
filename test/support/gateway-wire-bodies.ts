// Test helpers (no test of their own): the stub model's responses on every wire, built with the stub's own encoders
// (driver/stub-models), with the classes each wire reports of a StubUsage; and feeding a meter a body in chunks.
import type { WireProtocol, WireSample } from '../../shared/gateway.ts';
import type { StubStep, StubUsage } from '../../shared/stub-script.ts';
import { StubScript } from '../../shared/stub-script.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import { anthropicJson, anthropicSse } from '../../driver/stub-models/anthropic.ts';
import { responsesWire } from '../../driver/stub-models/openai-responses.ts';
import { chatWire } from '../../driver/stub-models/openai-chat.ts';
import { geminiWire } from '../../driver/stub-models/gemini.ts';
import type { WireAnswer } from '../../driver/stub-models/wires.ts';
import { usageMeter } from '../../gateway/usage/index.ts';

export interface StubBody {
  name: string;
  protocol: WireProtocol;
  streamed: boolean;
  answer: WireAnswer;
}

/** What a wire reports of the stub's usage: Anthropic has no reasoning count, the others no cache-write count. */
export function expectedTokens(protocol: WireProtocol, u: StubUsage): TokenUsage {
  return protocol === 'anthropic'
    ? { input: u.input, output: u.output, cache_read: u.cache_read, cache_write: u.cache_write, reasoning: null }
    : { input: u.input, output: u.output, cache_read: u.cache_read, cache_write: null, reasoning: u.reasoning };
}

/** The stub's answer to one step on every wire, streamed and not. */
export function stubBodies(step: StubStep, usage: StubUsage, model: string): StubBody[] {
  const script = StubScript.parse({ steps: [{ ...step, usage }] });
  const ask = (wire: typeof responsesWire, body: Record<string, unknown>, path = '/v1/x') => wire.answer({ script, body, headers: {}, path, query: new URLSearchParams() });
  return [
    { name: 'anthropic sse', protocol: 'anthropic', streamed: true, answer: { status: 200, contentType: 'text/event-stream', body: anthropicSse(step, usage, model) } },
    { name: 'anthropic json', protocol: 'anthropic', streamed: false, answer: { status: 200, contentType: 'application/json', body: JSON.stringify(anthropicJson(step, usage, model)) } },
    { name: 'openai-responses sse', protocol: 'openai-responses', streamed: true, answer: ask(responsesWire, { model, stream: true }) },
    { name: 'openai-responses json', protocol: 'openai-responses', streamed: false, answer: ask(responsesWire, { model, stream: false }) },
    { name: 'openai-chat sse', protocol: 'openai-chat', streamed: true, answer: ask(chatWire, { model, stream: true }) },
    { name: 'openai-chat json', protocol: 'openai-chat', streamed: false, answer: ask(chatWire, { model }) },
    { name: 'gemini sse', protocol: 'gemini', streamed: true, answer: ask(geminiWire, {}, `/v1beta/models/${model}:streamGenerateContent`) },
    { name: 'gemini json', protocol: 'gemini', streamed: false, answer: ask(geminiWire, {}, `/v1beta/models/${model}:generateContent`) },
  ];
}

/** Cuts bytes into chunks whose sizes cycle through `sizes` (each at least 1). */
export function chunked(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes.length === 0 ? bytes.length : sizes[k % sizes.length]!);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** Meters a whole body, cut into chunks of the given sizes (one chunk by default). */
export function meter(protocol: WireProtocol, body: string | Uint8Array, options: { status?: number; contentType?: string; requestModel?: string; sizes?: readonly number[] } = {}): WireSample {
  const m = usageMeter(protocol, { status: options.status ?? 200, contentType: options.contentType ?? null, requestModel: options.requestModel ?? null });
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  for (const chunk of chunked(bytes, options.sizes ?? [])) m.push(chunk);
  return m.end();
}

/** An SSE stream of events (each `data:` one JSON value or a literal string such as [DONE]). */
export function sse(events: readonly (readonly [string | null, unknown])[]): string {
  return events.map(([name, data]) => `${name === null ? '' : `event: ${name}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');
}
