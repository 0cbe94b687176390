// The ACP mapping (translator.ts) on real ACP sessions of today's Gemini CLI and OpenCode (recorded by
// test/live/acp-compare.test.ts, paths rewritten to /tmp/run), on the protocol's edge cases, and on hostile input.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HarnessAdapter } from '../../adapter.ts';
import type { HarnessEvent } from '../../events.ts';
import { HarnessEvent as HarnessEventSchema } from '../../events.ts';
import { TranslationSession } from '../session.ts';
import { acpAdapterOf, acpInvocation } from './adapter.ts';
import { runProtocol } from '../../run-protocol.ts';
import { HarnessManifest } from '../../manifest.ts';
import { RunSpec } from '../../run.ts';

const WORKDIR = '/tmp/run/workspace';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const base: HarnessAdapter = { slug: 'agent', usageShape: { classes: [], doc: '' }, invocation: () => ({ argv: ['agent'], env: {}, stdin: 'close', files: [] }), createTranslator: () => { throw new Error('the stdout translator is not used over ACP'); } };
const adapter = acpAdapterOf(base);

function translate(lines: readonly string[], exit = 0) {
  const session = new TranslationSession(adapter, { workdir: WORKDIR });
  const events: HarnessEvent[] = [];
  for (const text of lines) events.push(...session.stdout({ text, bytes: Buffer.byteLength(text), truncated: false }));
  const { events: last, summary } = session.finish({ code: exit, signal: null });
  return { events: [...events, ...last], result: summary.result };
}

const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8').split('\n').filter(Boolean);
const brief = (events: readonly HarnessEvent[]) =>
  events.map((e) => {
    if (e.type === 'command') return `command ${e.command}${e.exit_code === undefined ? '' : ` exit=${e.exit_code}`}`;
    if (e.type === 'read' || e.type === 'write' || e.type === 'list') return `${e.type} ${e.path}`;
    if (e.type === 'search') return `search ${e.query}`;
    if (e.type === 'agent' || e.type === 'reasoning') return `${e.type} ${e.message}`;
    return e.type;
  });

const rpc = (update: object, sessionId = 's-1') => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update } });
const response = (id: number, result: object) => JSON.stringify({ jsonrpc: '2.0', id, result });

describe('ACP sessions of real agents', () => {
  it('Gemini CLI 0.61.0: commands announced only in permission requests (titled with the command), file calls by location, searches by title, the answer', () => {
    const { events, result } = translate(fixture('gemini-0.61.0-acp-tools.jsonl'));
    expect(brief(events)).toEqual([
      'reasoning ****\nI should look at the directory first.',
      'agent Let me list files.',
      'command ls -la && echo hi',
      `write ${WORKDIR}/hello.txt`,
      `read ${WORKDIR}/hello.txt`,
      `write ${WORKDIR}/hello.txt`,
      "search 'hello' within ./",
      "search '**/*.txt'",
      'search .',
      'unknown',
      'command exit 3',
      'agent All done.',
    ]);
    expect(events.every((e) => HarnessEventSchema.safeParse(e).success)).toBe(true);
    expect(result).toMatchObject({ session_id: expect.stringMatching(/^[0-9a-f-]{36}$/), tokens: null, raw_usage: null, reported_cost_usd: null, is_error: false });
  });

  it("OpenCode 1.18.33: raw input and output: commands with their exit codes, searches by pattern; skill and subagent calls are `unknown` (kinds other and think)", () => {
    const { events, result } = translate(fixture('opencode-1.18.33-acp-tools.jsonl'));
    const tools = brief(events).filter((b) => !b.startsWith('agent') && !b.startsWith('reasoning'));
    expect(tools).toEqual([
      'command ls -la && echo hi exit=0',
      `write ${WORKDIR}/hello.txt`,
      `read ${WORKDIR}/hello.txt`,
      `write ${WORKDIR}/hello.txt`,
      'search hello',
      'search **/*.txt',
      'unknown',
      'unknown',
      'command exit 3 exit=3',
    ]);
    const commands = events.filter((e) => e.type === 'command');
    expect(commands.map((e) => e.is_success)).toEqual([true, false]);
    expect(brief(events).at(-1)).toMatch(/^agent /);
    expect(result).toMatchObject({ session_id: expect.stringMatching(/^ses_/), tokens: null, is_error: false });
  });
});

describe('ACP protocol edge cases', () => {
  const call = (status: string, extra: object = {}) => rpc({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status, ...extra });

  it('joins message chunks per message id and kind; a tool call in between ends the message', () => {
    const { events } = translate([
      rpc({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'think ' } }),
      rpc({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'more' } }),
      rpc({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'Hel' } }),
      rpc({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'lo' } }),
      rpc({ sessionUpdate: 'agent_message_chunk', messageId: 'm2', content: { type: 'text', text: 'Second' } }),
      rpc({ sessionUpdate: 'tool_call', toolCallId: 't1', kind: 'execute', title: 'ls', rawInput: { command: 'ls -1' }, status: 'pending' }),
      call('completed', { rawOutput: { exit_code: 0 } }),
      rpc({ sessionUpdate: 'agent_message_chunk', messageId: 'm3', content: { type: 'text', text: 'Done' } }),
    ]);
    expect(brief(events)).toEqual(['reasoning think more', 'agent Hello', 'agent Second', 'command ls -1 exit=0', 'agent Done']);
  });

  it("a command's success comes only from its own exit code, never from the call's status", () => {
    const { events } = translate([rpc({ sessionUpdate: 'tool_call', toolCallId: 't1', kind: 'execute', title: 'make', status: 'failed' })]);
    expect(events).toEqual([expect.objectContaining({ type: 'command', command: 'make' })]);
    expect(events[0]).not.toHaveProperty('is_success');
    expect(events[0]).not.toHaveProperty('exit_code');
  });

  it('a call that never ends is reported at the end without an outcome; one with nothing to report by is unknown', () => {
    const { events } = translate([
      rpc({ sessionUpdate: 'tool_call', toolCallId: 'a', kind: 'read', locations: [{ path: 'src/x.ts', line: 3 }], status: 'in_progress' }),
      rpc({ sessionUpdate: 'tool_call', toolCallId: 'b', kind: 'fetch', title: 'https://example.test', status: 'completed' }),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ type: 'unknown' }),
      { type: 'read', path: `${WORKDIR}/src/x.ts`, start_line: 3, timestamp: expect.any(String), session_id: 's-1' },
    ]);
  });

  it('usage: exact only when no turn reports cached or thought tokens (ACP does not say whether they are inside input/output)', () => {
    const turn = (usage: object) => translate([response(2, { stopReason: 'end_turn', usage })]).result;
    expect(turn({ inputTokens: 100, outputTokens: 20, totalTokens: 120 }).tokens).toEqual({ input: 100, output: 20, cache_read: null, cache_write: null, reasoning: null });
    expect(turn({ inputTokens: 100, outputTokens: 20, totalTokens: 120, cachedReadTokens: 0, thoughtTokens: 0 }).tokens).toEqual({ input: 100, output: 20, cache_read: 0, cache_write: null, reasoning: 0 });
    for (const ambiguous of [{ cachedReadTokens: 40 }, { cachedWriteTokens: 1 }, { thoughtTokens: 5 }, { inputTokens: -1 }, { outputTokens: 1.5 }]) {
      const result = turn({ inputTokens: 100, outputTokens: 20, totalTokens: 120, ...ambiguous });
      expect(result.tokens, JSON.stringify(ambiguous)).toBeNull();
      expect(result.raw_usage).toMatchObject(ambiguous);
    }
  });

  it('a USD usage_update is the reported cost; another currency is not', () => {
    expect(translate([rpc({ sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 0.25, currency: 'USD' } })]).result.reported_cost_usd).toBe(0.25);
    expect(translate([rpc({ sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 3, currency: 'credits' } })]).result.reported_cost_usd).toBeNull();
  });

  it('a stop reason other than end_turn is an error and fails the session; a JSON-RPC error is an error event', () => {
    const refused = translate([response(2, { stopReason: 'refusal' })]);
    expect(refused.result.is_error).toBe(true);
    expect(refused.events).toEqual([expect.objectContaining({ type: 'error', code: 'acp_refusal' })]);
    const failed = translate([JSON.stringify({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'model unavailable' } })]);
    expect(failed.events).toEqual([expect.objectContaining({ type: 'error', message: 'model unavailable', code: '-32603' })]);
  });

  it('what is not JSON-RPC (a log line the agent printed, another protocol) is unknown, not lost', () => {
    const { events } = translate(['Starting agent...', '{"type":"x"}', JSON.stringify({ jsonrpc: '2.0', method: 'fs/read_text_file', id: 9, params: {} })]);
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown']);
  });
});

describe('ACP hostile input', () => {
  const value = fc.letrec((tie) => ({
    json: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(), fc.array(tie('json'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('toolCallId', 'status', 'kind', 'title', 'rawInput', 'rawOutput', 'locations', 'content', 'path', 'command', 'exit_code', 'text', 'type', 'messageId', '__proto__', 'constructor'), tie('json'), { maxKeys: 5 })),
  })).json;
  const update = fc.record({ sessionUpdate: fc.constantFrom('agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'usage_update', 'notice', 'plan', 'bogus'), toolCallId: fc.constantFrom('a', 'b', ''), kind: fc.constantFrom('execute', 'read', 'edit', 'search', 'other', 'move'), status: fc.constantFrom('pending', 'completed', 'failed'), title: value, rawInput: value, rawOutput: value, locations: value, content: value, cost: value }, { requiredKeys: ['sessionUpdate'] });
  const line = fc.oneof(
    update.map((u) => rpc(u)),
    fc.record({ stopReason: value, usage: value, sessionId: value }).map((r) => response(1, r)),
    value.map((v) => JSON.stringify({ jsonrpc: '2.0', method: 'session/request_permission', id: 1, params: { toolCall: v } })),
    fc.string(),
  );

  it('never throws, every event meets the contract, and a line yields its events or an unknown (never a translator failure)', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const { events } = translate(lines);
        for (const event of events) expect(HarnessEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
        expect(events.filter((e) => e.type === 'warning' && e.code === 'translator_failed')).toEqual([]);
      }),
      { numRuns: 300, seed: 41 },
    );
  });

  it('an oversized line arrives truncated and becomes unknown', () => {
    const session = new TranslationSession(adapter, { workdir: WORKDIR });
    const text = rpc({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x'.repeat(200) } });
    expect(session.stdout({ text: text.slice(0, 64), bytes: Buffer.byteLength(text), truncated: true })).toEqual([expect.objectContaining({ type: 'unknown', original_bytes: Buffer.byteLength(text) })]);
  });
});

describe('choosing the protocol', () => {
  const manifest = HarnessManifest.parse({
    slug: 'agent', name: 'Agent', strategy: 'structured', binary: 'agent', docs_url: 'https://agent.example.test/', min_supported: '1.0.0', latest_validated: '1.0.0',
    install: { command: ['npm', 'install', 'agent'] }, version_command: ['agent', '--version'], auth: { modes: ['api-key'], api_key: { host_vars: ['AGENT_API_KEY'], inject_as: 'AGENT_API_KEY' } }, model_ids: 'vendor',
    acp: { command: ['agent', 'acp'] },
  });
  it("takes the Run's protocol, else the manifest's default; refuses ACP for a harness without [acp] and for several sessions, naming the field", () => {
    expect(runProtocol({ sessions: 1 }, manifest)).toBe('stdout');
    expect(runProtocol({ sessions: 1, protocol: 'acp' }, manifest)).toBe('acp');
    expect(runProtocol({ sessions: 1 }, { ...manifest, acp: { command: ['agent', 'acp'], default: true } })).toBe('acp');
    expect(() => runProtocol({ sessions: 1, protocol: 'acp' }, { ...manifest, acp: undefined })).toThrow(/^spec\.protocol: "acp": agent does not speak the Agent Client Protocol/);
    expect(() => runProtocol({ sessions: 2, protocol: 'acp' }, manifest)).toThrow(/^spec\.sessions: 2: a run over ACP drives one session/);
  });

  it('refuses an [acp] command that does not start with the harness binary, and a protocol that is neither, naming the field', () => {
    const bad = HarnessManifest.safeParse({ ...manifest, acp: { command: ['sh', '-c', 'agent acp'] } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues).toEqual([expect.objectContaining({ path: ['acp', 'command'], message: expect.stringContaining('must start with the harness binary "agent"') })]);
    const spec = RunSpec.safeParse({ harness: 'agent', model: 'm', prompt: 'p', protocol: 'ssh' });
    expect(spec.success).toBe(false);
    expect(spec.error!.issues.map((i) => i.path)).toEqual([['protocol']]);
  });

  it("starts the agent with the manifest's ACP command, the model filled in, with the stdout invocation's environment and files", () => {
    const stdout = { argv: ['agent', '-p', 'x'], env: { A: '1' }, stdin: 'close' as const, files: [{ path: '.agent/config.json', content: '{}' }] };
    expect(acpInvocation({ ...manifest, acp: { command: ['agent', '--acp', '-m', '{model}'], default: false } }, stdout, 'model-1')).toEqual({ ...stdout, argv: ['agent', '--acp', '-m', 'model-1'] });
  });
});
