// What the harnesses' tools returned to the stub model, read back from its recorded requests: what a command run
// inside a driver container printed, for tests (serve.ts lists it at GET /_stub/tool-results; in-process servers
// call it on their `requests`).
import type { RecordedRequest } from './server.ts';

type Json = Record<string, unknown>;
const text = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (typeof b === 'object' && b !== null && typeof (b as Json).text === 'string' ? (b as Json).text : '')).join('') : '';

/** Tool results of the last request of each conversation that carried some (Anthropic, OpenAI chat and Responses wires). */
export function toolResults(requests: readonly RecordedRequest[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of requests) {
    const body = r.body as Json | undefined;
    // The Responses wire: tool results are `function_call_output` items of `input`.
    const messages = Array.isArray(body?.messages) ? (body.messages as Json[]) : Array.isArray(body?.input) ? (body.input as Json[]) : undefined;
    if (!messages) continue;
    for (const m of messages) {
      const results: [unknown, string][] =
        m.type === 'function_call_output' ? [[m.call_id, typeof m.output === 'string' ? m.output : text(m.output)]]
        : m.role === 'tool' ? [[m.tool_call_id, text(m.content)]]
        : Array.isArray(m.content) ? (m.content as Json[]).filter((b) => b.type === 'tool_result').map((b) => [b.tool_use_id, text(b.content)])
        : [];
      for (const [id, result] of results) {
        // A conversation resends its earlier results with every request: each is listed once (by its call id).
        const key = `${String(id)}\n${result}`;
        if (!seen.has(key)) out.push(result);
        seen.add(key);
      }
    }
  }
  return out;
}
