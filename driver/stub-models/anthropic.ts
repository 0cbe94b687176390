// Anthropic Messages API (POST /v1/messages), streaming SSE and plain JSON, as Claude Code consumes it.
// Event order per the streaming docs: message_start, per block content_block_start/delta.../stop,
// message_delta (stop_reason + output usage), message_stop. Usage: input_tokens excludes cache.
import type { StubScript, StubStep, StubUsage } from '../../shared/stub-script.ts';
import type { ConversationView } from './conversation.ts';
import { nextId } from './conversation.ts';

type Json = Record<string, unknown>;

export function anthropicView(body: Json): ConversationView {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  let toolResults = 0;
  let lastUserText = '';
  for (const m of messages) {
    const content = m.content;
    if (m.role !== 'user') continue;
    if (typeof content === 'string') {
      lastUserText = content;
      continue;
    }
    if (!Array.isArray(content)) continue;
    const texts: string[] = [];
    for (const block of content as Json[]) {
      if (block.type === 'tool_result') toolResults += 1;
      else if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    }
    if (texts.length > 0) lastUserText = texts.join('\n');
  }
  return { toolResults, lastUserText };
}

function usage(u: StubUsage, output: number): Json {
  return { input_tokens: u.input, cache_creation_input_tokens: u.cache_write, cache_read_input_tokens: u.cache_read, output_tokens: output };
}

function blocks(step: StubStep): Json[] {
  const out: Json[] = [];
  if (step.thinking) out.push({ type: 'thinking', thinking: step.thinking, signature: 'stub-signature' });
  if (step.text) out.push({ type: 'text', text: step.text });
  if (step.tool) out.push({ type: 'tool_use', id: step.tool.id ?? nextId('toolu_stub'), name: step.tool.name, input: step.tool.args });
  if (out.length === 0) out.push({ type: 'text', text: 'Done.' });
  return out;
}

export function anthropicJson(step: StubStep, u: StubUsage, model: string): Json {
  const content = blocks(step);
  return {
    id: nextId('msg_stub'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: step.tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: usage(u, u.output),
  };
}

export function anthropicSse(step: StubStep, u: StubUsage, model: string): string {
  const id = nextId('msg_stub');
  const events: [string, Json][] = [];
  events.push(['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usage(u, 1) } }]);
  blocks(step).forEach((block, index) => {
    if (block.type === 'thinking') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }]);
    } else if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: step.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: u.output } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

export function anthropicError(status: number, message: string): Json {
  const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  return { type: 'error', error: { type, message } };
}

export function anthropicKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const key = headers['x-api-key'];
  if (typeof key === 'string') return key;
  const auth = headers.authorization;
  return typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '') : undefined;
}

export type { StubScript };
