// Issue 19, finding 9 class: a tool name is harness-controlled text, so it must never select an inherited
// Object property from a lookup table. Each adapter sees a full call + result for each such name.
import { describe, expect, it } from 'vitest';
import { getHarness } from './registry.ts';
import claudeAdapter from './claude/adapter.ts';
import clineAdapter from './cline/adapter.ts';
import copilotAdapter from './copilot/adapter.ts';
import geminiAdapter from './gemini/adapter.ts';
import qwenAdapter from './qwen/adapter.ts';
import { claudeToolKind } from './claude/map-claude-tools.ts';
import { clineToolKind } from './cline/map-cline-tools.ts';
import { copilotToolKind } from './copilot/map-copilot-tools.ts';
import { geminiToolKind } from './gemini/map-gemini-tools.ts';
import { qwenToolKind } from './qwen/map-qwen-tools.ts';
import { strip, translateText } from '../test/support/translate-fixture.ts';
import type { HarnessAdapter } from '../shared/adapter.ts';

const OBJECT_PROPERTY_NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const UNHEARD_OF_TOOL = 'tool_no_harness_has';
const lines = (...records: object[]) => records.map((r) => JSON.stringify(r)).join('\n');

/** A call of tool `name` with id `t1` and its successful result, in each harness's own records. */
const sessions: Record<string, { adapter: HarnessAdapter; kind: (name: string) => string; session: (name: string) => string }> = {
  claude: {
    adapter: claudeAdapter(getHarness('claude').manifest),
    kind: claudeToolKind,
    session: (name) =>
      lines(
        { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name, input: { x: 1 } }] }, session_id: 's1' },
        { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: false, content: 'ok' }] }, session_id: 's1' },
      ),
  },
  qwen: {
    adapter: qwenAdapter(getHarness('qwen').manifest),
    kind: qwenToolKind,
    session: (name) =>
      lines(
        { type: 'assistant', message: { content: [{ type: 'tool_use', id: 't1', name, input: { x: 1 } }] }, session_id: 's1' },
        { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: false, content: 'ok' }] }, session_id: 's1' },
      ),
  },
  cline: {
    adapter: clineAdapter(getHarness('cline').manifest),
    kind: clineToolKind,
    session: (name) =>
      lines(
        { type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: name, toolCallId: 't1', input: { x: 1 } } },
        { type: 'agent_event', event: { type: 'content_end', contentType: 'tool', toolName: name, toolCallId: 't1', output: 'ok' } },
      ),
  },
  copilot: {
    adapter: copilotAdapter(getHarness('copilot').manifest),
    kind: copilotToolKind,
    session: (name) =>
      lines(
        { type: 'tool.execution_start', data: { toolCallId: 't1', toolName: name, arguments: { x: 1 } } },
        { type: 'tool.execution_complete', data: { toolCallId: 't1', success: true, result: { content: 'ok' } } },
      ),
  },
  gemini: {
    adapter: geminiAdapter(getHarness('gemini').manifest),
    kind: geminiToolKind,
    session: (name) => lines({ type: 'tool_use', tool_name: name, tool_id: 't1', parameters: { x: 1 } }, { type: 'tool_result', tool_id: 't1', status: 'success', output: 'ok' }),
  },
};

describe.each(Object.entries(sessions))('%s adapter: tool names that are Object properties (issue 19)', (_, { adapter, kind, session }) => {
  it.each(OBJECT_PROPERTY_NAMES)('finding 9: a tool named %s is "other" and its call comes out as one valid unknown event', (name) => {
    // translateText checks every event against the contract. The call must come out exactly as a tool the
    // adapter has never heard of does: one unknown holding call and result (plus whatever the session adds).
    const { events } = translateText(adapter, session(name), { workdir: '/w' });
    const baseline = translateText(adapter, session(UNHEARD_OF_TOOL), { workdir: '/w' }).events;
    expect(strip(events)).toEqual(JSON.parse(JSON.stringify(strip(baseline)).replaceAll(JSON.stringify(UNHEARD_OF_TOOL), JSON.stringify(name))));
    expect(strip(events)[0]).toMatchObject({ type: 'unknown' });
    expect(kind(name)).toBe('other');
  });
});
