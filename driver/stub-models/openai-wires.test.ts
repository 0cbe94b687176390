import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from './index.ts';
import type { StubModelServer } from './index.ts';
import { toolResults } from './tool-results.ts';

let server: StubModelServer;
beforeAll(async () => {
  server = await startStubModelServer({
    script: { steps: [{ thinking: 'think', text: 'hi', tool: { name: 'exec_command', args: { cmd: 'ls' }, id: 'call_1' } }, { text: 'done' }], models: ['mock-model', 'other'] },
  });
});
afterAll(() => server.close());

const post = (path: string, body: object, key = 'sk-fake-test') =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
// Wire JSON is read loosely here, as a client would.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const sseData = (text: string): Loose[] => text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)) as Loose);

describe('stub: OpenAI Responses', () => {
  it('a scripted throttle answers 429 with the retry-after it names (Responses and Anthropic wires)', async () => {
    const throttling = await startStubModelServer({ script: { steps: [{ text: 'x' }], rules: [{ when_last_user_contains: 'busy', step: { error: { status: 429, message: 'slow down', retry_after_s: 17 } } }] } });
    try {
      const responses = await fetch(`${throttling.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'busy now' }) });
      expect([responses.status, responses.headers.get('retry-after')]).toEqual([429, '17']);
      const messages = await fetch(`${throttling.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'busy now' }] }) });
      expect([messages.status, messages.headers.get('retry-after')]).toEqual([429, '17']);
      const calm = await fetch(`${throttling.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'calm' }) });
      expect([calm.status, calm.headers.get('retry-after')]).toEqual([200, null]);
    } finally {
      await throttling.close();
    }
  });

  it('streams reasoning, message and function call items, and usage with cached tokens inside input_tokens', async () => {
    const events = sseData(await (await post('/v1/responses', { model: 'gpt-5.5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'go' }] }] })).text());
    const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.type);
    expect(done).toEqual(['reasoning', 'message', 'function_call']);
    expect(events.find((e) => e.item?.type === 'function_call' && e.type === 'response.output_item.done')!.item).toMatchObject({ call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' });
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 300 }, output_tokens: 80, output_tokens_details: { reasoning_tokens: 12 } } } });
  });
  it('lists function_call_output items as tool results (GET /_stub/tool-results)', async () => {
    const own = await startStubModelServer({ script: { steps: [{ text: 'a' }, { text: 'b' }] } });
    try {
      await (await fetch(`${own.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: [{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'looked=yes' }] }) })).text();
      expect(toolResults(own.requests)).toEqual(['looked=yes']);
    } finally {
      await own.close();
    }
  });

  it('counts function_call_output items to pick the step', async () => {
    const events = sseData(await (await post('/v1/responses', { model: 'm', input: [{ type: 'function_call_output', call_id: 'call_1', output: 'x' }] })).text());
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).toEqual(['done']);
  });
});

describe('stub: OpenAI Chat Completions', () => {
  it('streams reasoning_content, content and tool_calls, then a usage chunk and [DONE]', async () => {
    const text = await (await post('/v1/chat/completions', { model: 'mock-model', stream: true, messages: [{ role: 'user', content: 'go' }] })).text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const chunks = sseData(text);
    const deltas = chunks.flatMap((c) => c.choices.map((ch: Loose) => ch.delta));
    expect(deltas).toEqual(expect.arrayContaining([{ reasoning_content: 'think' }, { content: 'hi' }, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }] }]));
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 300 }, completion_tokens_details: { reasoning_tokens: 12 } });
  });
  it('answers non-streaming requests, counts role:tool messages, lists models, and maps BADKEY to 401', async () => {
    const res = (await (await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'go' }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] })).json()) as Loose;
    expect(res.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' });
    expect(((await (await fetch(`${server.url}/v1/models`)).json()) as Loose).data.map((m: Loose) => m.id)).toEqual(['mock-model', 'other']);
    expect((await post('/v1/chat/completions', { model: 'm', messages: [] }, 'sk-BADKEY')).status).toBe(401);
  });
});
