// Gemini API generateContent (POST /v1beta/models/{model}:streamGenerateContent?alt=sse, :generateContent,
// :countTokens), as Gemini CLI consumes it. Thinking goes out as `thought: true` parts. Usage in Gemini
// convention: promptTokenCount INCLUDES cachedContentTokenCount; candidatesTokenCount EXCLUDES thoughtsTokenCount.
import type { StubStep, StubUsage } from '../../shared/stub-script.ts';
import type { ConversationView } from './conversation.ts';
import { keyFailure, selectStep, usageOf } from './conversation.ts';
import type { Wire, WireAnswer, WireRequest } from './wires.ts';

type Json = Record<string, unknown>;
const ROUTE = /^\/(?:v1beta|v1)\/models\/([^:]+):(streamGenerateContent|generateContent|countTokens)$/;

export function geminiView(body: Json): ConversationView {
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : [];
  let toolResults = 0;
  let lastUserText = '';
  for (const c of contents) {
    const parts = Array.isArray(c.parts) ? (c.parts as Json[]) : [];
    for (const p of parts) if (p.functionResponse) toolResults += 1;
    if (c.role !== 'user') continue;
    const text = parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
    if (text) lastUserText = text;
  }
  return { toolResults, lastUserText };
}

function usage(u: StubUsage): Json {
  const prompt = u.input + u.cache_read;
  const candidates = u.output - u.reasoning;
  return { promptTokenCount: prompt, cachedContentTokenCount: u.cache_read, candidatesTokenCount: candidates, thoughtsTokenCount: u.reasoning, totalTokenCount: prompt + u.output };
}

function response(step: StubStep, u: StubUsage, model: string): Json {
  const parts: Json[] = [];
  if (step.thinking) parts.push({ text: step.thinking, thought: true });
  if (step.text) parts.push({ text: step.text });
  if (step.tool) parts.push({ functionCall: { name: step.tool.name, args: step.tool.args } });
  if (parts.length === 0) parts.push({ text: 'Done.' });
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage(u), modelVersion: model };
}

function errorBody(status: number, message: string): string {
  const statusName = status === 401 ? 'UNAUTHENTICATED' : status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
  return JSON.stringify({ error: { code: status, message, status: statusName } });
}

export const geminiWire: Wire = {
  name: 'gemini',
  matches: (method, path) => method === 'POST' && ROUTE.test(path),
  answer(request: WireRequest): WireAnswer {
    const [, model = 'gemini-mock', action] = ROUTE.exec(request.path)!;
    if (action === 'countTokens') return { status: 200, contentType: 'application/json', body: JSON.stringify({ totalTokens: 100 }) };
    const key = request.headers['x-goog-api-key'] ?? request.query.get('key') ?? undefined;
    const step = selectStep(request.script, geminiView(request.body));
    const error = keyFailure(key) ?? step.error;
    if (error) return { status: error.status, contentType: 'application/json', body: errorBody(error.status, error.message) };
    const body = response(step, usageOf(request.script, step), model);
    if (action === 'streamGenerateContent') return { status: 200, contentType: 'text/event-stream', body: `data: ${JSON.stringify(body)}\n\n` };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
  },
};
