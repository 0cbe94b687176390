// OpenAI Chat Completions (POST /v1/chat/completions), streamed chunks and plain JSON, as the OpenAI-compatible
// harnesses consume it (Qwen Code, OpenCode, Kilo, Cline, Copilot/Droid BYOK). Reasoning goes out as
// `delta.reasoning_content` (the de-facto field of OpenAI-compatible servers). Usage in OpenAI convention:
// prompt_tokens INCLUDES cached tokens; completion_tokens includes reasoning. GET /v1/models lists script models.
import type { StubStep, StubUsage } from '../../shared/stub-script.ts';
import type { ConversationView } from './conversation.ts';
import { keyFailure, nextId, selectStep, usageOf } from './conversation.ts';
import type { Wire, WireAnswer, WireRequest } from './wires.ts';

type Json = Record<string, unknown>;

export function chatView(body: Json): ConversationView {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  let toolResults = 0;
  let lastUserText = '';
  for (const m of messages) {
    if (m.role === 'tool') toolResults += 1;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') lastUserText = m.content;
    else if (Array.isArray(m.content)) lastUserText = (m.content as Json[]).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
  }
  return { toolResults, lastUserText };
}

function usage(u: StubUsage): Json {
  const prompt = u.input + u.cache_read;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cache_read },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

function toolCall(step: StubStep): Json | undefined {
  if (!step.tool) return undefined;
  return { index: 0, id: step.tool.id ?? nextId('call_'), type: 'function', function: { name: step.tool.name, arguments: JSON.stringify(step.tool.args) } };
}

export function chatStream(step: StubStep, u: StubUsage, model: string): string {
  const id = nextId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Json, finish_reason: string | null = null, extra: Json = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`;
  let out = chunk({ role: 'assistant', content: '' });
  if (step.thinking) out += chunk({ reasoning_content: step.thinking });
  if (step.text) out += chunk({ content: step.text });
  const call = toolCall(step);
  if (call) out += chunk({ tool_calls: [call] });
  if (!step.thinking && !step.text && !call) out += chunk({ content: 'Done.' });
  out += chunk({}, call ? 'tool_calls' : 'stop');
  out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usage(u) })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

export function chatJson(step: StubStep, u: StubUsage, model: string): Json {
  const call = toolCall(step);
  const message: Json = { role: 'assistant', content: step.text ?? (call ? null : 'Done.') };
  if (step.thinking) message.reasoning_content = step.thinking;
  if (call) message.tool_calls = [{ id: call.id, type: 'function', function: call.function }];
  return { id: nextId('chatcmpl-'), object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }], usage: usage(u) };
}

function errorBody(status: number, message: string): string {
  return JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'invalid_request_error', code: status === 401 ? 'invalid_api_key' : null } });
}

export const chatWire: Wire = {
  name: 'openai-chat',
  matches: (method, path) => method === 'POST' && /^\/(v1\/)?chat\/completions$/.test(path),
  answer(request: WireRequest): WireAnswer {
    const key = request.headers.authorization?.replace(/^Bearer\s+/i, '');
    const step = selectStep(request.script, chatView(request.body));
    const error = keyFailure(key) ?? step.error;
    if (error) return { status: error.status, contentType: 'application/json', body: errorBody(error.status, error.message) };
    const model = typeof request.body.model === 'string' ? request.body.model : 'mock-model';
    const u = usageOf(request.script, step);
    if (request.body.stream === true) return { status: 200, contentType: 'text/event-stream', body: chatStream(step, u, model) };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(chatJson(step, u, model)) };
  },
};

export const modelsWire: Wire = {
  name: 'openai-models',
  matches: (method, path) => method === 'GET' && /^\/(v1\/)?models$/.test(path),
  answer: (request) => ({
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify({ object: 'list', data: request.script.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'tcab-stub' })) }),
  }),
};
