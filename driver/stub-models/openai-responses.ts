// OpenAI Responses API (POST /v1/responses), streaming SSE, as Codex CLI consumes it: response.created,
// per output item output_item.added -> deltas -> output_item.done, then response.completed with usage.
// Usage in OpenAI convention: input_tokens INCLUDES cached tokens; output_tokens includes reasoning.
import type { StubScript, StubStep, StubUsage } from '../../shared/stub-script.ts';
import type { ConversationView } from './conversation.ts';
import { keyFailure, nextId, selectStep, usageOf } from './conversation.ts';
import type { Wire, WireAnswer, WireRequest } from './wires.ts';

type Json = Record<string, unknown>;

export function responsesView(body: Json): ConversationView {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  let toolResults = 0;
  let lastUserText = typeof body.input === 'string' ? body.input : '';
  for (const item of input) {
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') toolResults += 1;
    if (item.role === 'user' && Array.isArray(item.content)) {
      const text = (item.content as Json[]).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
      if (text) lastUserText = text;
    }
  }
  return { toolResults, lastUserText };
}

function usage(u: StubUsage): Json {
  const input = u.input + u.cache_read;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cache_read },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: input + u.output,
  };
}

function outputItems(step: StubStep): Json[] {
  const items: Json[] = [];
  if (step.thinking) items.push({ id: nextId('rs_'), type: 'reasoning', summary: [{ type: 'summary_text', text: step.thinking }] });
  if (step.text) items.push({ id: nextId('msg_'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] });
  if (step.tool) {
    const call_id = step.tool.id ?? nextId('call_');
    items.push(
      step.tool.input !== undefined
        ? { id: nextId('ctc_'), type: 'custom_tool_call', status: 'completed', call_id, name: step.tool.name, input: step.tool.input }
        : { id: nextId('fc_'), type: 'function_call', status: 'completed', call_id, name: step.tool.name, arguments: JSON.stringify(step.tool.args) },
    );
  }
  if (items.length === 0) items.push({ id: nextId('msg_'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] });
  return items;
}

function sse(events: Json[]): string {
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

export function responsesStream(step: StubStep, u: StubUsage, model: string): string {
  const id = nextId('resp_');
  const base = { id, object: 'response', model, created_at: Math.floor(Date.now() / 1000) };
  const events: Json[] = [
    { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
    { type: 'response.in_progress', response: { ...base, status: 'in_progress', output: [] } },
  ];
  const items = outputItems(step);
  items.forEach((item, output_index) => {
    if (item.type === 'reasoning') {
      events.push({ type: 'response.output_item.added', output_index, item: { ...item, summary: [] } });
      const text = (item.summary as Json[])[0]!.text as string;
      events.push({ type: 'response.reasoning_summary_part.added', item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      events.push({ type: 'response.reasoning_summary_text.delta', item_id: item.id, output_index, summary_index: 0, delta: text });
      events.push({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index, summary_index: 0, text });
    } else if (item.type === 'message') {
      const text = ((item.content as Json[])[0]!.text as string) ?? '';
      events.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } });
      events.push({ type: 'response.content_part.added', item_id: item.id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      events.push({ type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta: text });
      events.push({ type: 'response.output_text.done', item_id: item.id, output_index, content_index: 0, text });
    } else if (item.type === 'function_call') {
      events.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      events.push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta: item.arguments });
      events.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index, arguments: item.arguments });
    } else {
      events.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', input: '' } });
      events.push({ type: 'response.custom_tool_call_input.delta', item_id: item.id, output_index, delta: item.input });
      events.push({ type: 'response.custom_tool_call_input.done', item_id: item.id, output_index, input: item.input });
    }
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({ type: 'response.completed', response: { ...base, status: 'completed', output: items, usage: usage(u) } });
  return sse(events);
}

function errorBody(status: number, message: string): string {
  const type = status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error';
  return JSON.stringify({ type: 'error', error: { type, message, code: type } });
}

export const responsesWire: Wire = {
  name: 'openai-responses',
  matches: (method, path) => method === 'POST' && /^\/(v1\/)?responses$/.test(path),
  answer(request: WireRequest): WireAnswer {
    const key = request.headers.authorization?.replace(/^Bearer\s+/i, '');
    const step = selectStep(request.script as StubScript, responsesView(request.body));
    const error = keyFailure(key) ?? step.error;
    if (error) return { status: error.status, contentType: 'application/json', body: errorBody(error.status, error.message), ...('retry_after_s' in error && error.retry_after_s !== undefined ? { headers: { 'retry-after': String(error.retry_after_s) } } : {}) };
    const model = typeof request.body.model === 'string' ? request.body.model : 'mock-model';
    if (request.body.stream === false) {
      const items = outputItems(step);
      return { status: 200, contentType: 'application/json', body: JSON.stringify({ id: nextId('resp_'), object: 'response', status: 'completed', model, output: items, usage: usage(usageOf(request.script, step)) }) };
    }
    return { status: 200, contentType: 'text/event-stream', body: responsesStream(step, usageOf(request.script, step), model) };
  },
};
