import { afterEach, describe, expect, it } from 'vitest';
import { startStubModelServer } from './index.ts';
import type { StubModelServer } from './index.ts';

let server: StubModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SCRIPT = {
  steps: [
    { thinking: 'hmm', text: 'Listing.', tool: { name: 'Bash', args: { command: 'ls' }, id: 'toolu_1' } },
    { text: 'Done.' },
  ],
  rules: [{ when_last_user_contains: 'SUBAGENT-MARKER', step: { text: 'Subagent finished.' } }],
};

async function post(body: object, key = 'sk-ant-fake-test') {
  const res = await fetch(`${server!.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

function sseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, data };
    });
}

describe('stub model server: Anthropic Messages', () => {
  it('streams thinking, text and a tool call for step 0, with usage in Anthropic convention', async () => {
    server = await startStubModelServer({ script: SCRIPT });
    const { status, text } = await post({ model: 'claude-x', stream: true, messages: [{ role: 'user', content: 'go' }] });
    expect(status).toBe(200);
    const events = sseEvents(text);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    expect(events[0]!.data).toMatchObject({ message: { model: 'claude-x', usage: { input_tokens: 900, cache_read_input_tokens: 300, cache_creation_input_tokens: 50 } } });
    expect(events[2]!.data).toMatchObject({ delta: { type: 'thinking_delta', thinking: 'hmm' } });
    expect(events[8]!.data).toMatchObject({ content_block: { type: 'tool_use', id: 'toolu_1', name: 'Bash' } });
    expect(events[9]!.data).toMatchObject({ delta: { type: 'input_json_delta', partial_json: '{"command":"ls"}' } });
    expect(events[11]!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 80 } });
  });

  it('selects the step by the number of tool results in the conversation; rules match the last user message first', async () => {
    server = await startStubModelServer({ script: SCRIPT });
    const second = await post({ model: 'm', messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a' }] }] });
    expect(JSON.parse(second.text)).toMatchObject({ content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' });
    const sub = await post({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'SUBAGENT-MARKER do nothing' }] }] });
    expect(JSON.parse(sub.text)).toMatchObject({ content: [{ type: 'text', text: 'Subagent finished.' }] });
  });

  it('answers BAD400/BADKEY keys and error steps with HTTP errors, and records every request with its headers', async () => {
    server = await startStubModelServer({ script: { steps: [{ error: { status: 529, message: 'overloaded' } }] } });
    expect((await post({ model: 'm', messages: [] }, 'sk-ant-BAD400')).status).toBe(400);
    const unauthorized = await post({ model: 'm', messages: [] }, 'sk-ant-BADKEY');
    expect(unauthorized.status).toBe(401);
    expect(JSON.parse(unauthorized.text)).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    expect((await post({ model: 'm', messages: [] })).status).toBe(529);
    await fetch(`${server.url}/v1/unknown`, { method: 'POST' });
    expect(server.requests.map((r) => [r.path, r.status, r.headers['x-api-key'] ?? null])).toEqual([
      ['/v1/messages', 400, 'sk-ant-BAD400'],
      ['/v1/messages', 401, 'sk-ant-BADKEY'],
      ['/v1/messages', 529, 'sk-ant-fake-test'],
      ['/v1/unknown', 404, null],
    ]);
  });

  it('binds to loopback only', async () => {
    await expect(startStubModelServer({ script: SCRIPT, host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
  });
});
