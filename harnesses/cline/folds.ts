// Cline records that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). Tools need no entry: their events come with their content_end.
import type { RecordFold } from '../../shared/translate/folds.ts';
import { SILENT_AGENT_EVENTS, SILENT_HOOKS } from './translator.ts';

type Rec = Readonly<Record<string, unknown>>;
const eventOf = (record: Rec): Rec => (typeof record.event === 'object' && record.event !== null ? (record.event as Rec) : {});

export const folds: readonly RecordFold[] = [
  { match: { type: 'agent_event', event: { type: [...SILENT_AGENT_EVENTS] } }, kind: 'silent', why: 'iteration brackets, per-call usage (run_result has the total), tool progress, done' },
  { match: { type: 'hook_event', hookEventName: [...SILENT_HOOKS] }, kind: 'silent', why: 'tool hooks: content_start/content_end carry the tool' },
  { match: { type: 'hook_event', hookEventName: ['agent_end', 'agent_error'], parentAgentId: null }, kind: 'silent', why: "the main agent's end: run_result reports the verdict" },
  {
    match: { type: 'agent_event', event: { type: 'content_end', contentType: 'tool' } },
    // An end may omit toolName: the translator then takes the name from the call's start.
    when: (record, { before }) => {
      const end = eventOf(record);
      if (end.toolName !== undefined) return end.toolName === 'spawn_agent';
      return before.some((r) => {
        const start = typeof r === 'object' && r !== null ? eventOf(r as Rec) : {};
        return start.type === 'content_start' && start.contentType === 'tool' && start.toolCallId === end.toolCallId && start.toolName === 'spawn_agent';
      });
    },
    kind: 'silent',
    why: "a spawn_agent tool's end: the subagent's agent_start/agent_end hooks report it, with its own id",
  },
  {
    match: { type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: 'spawn_agent' } },
    kind: 'restated',
    why: "a spawn_agent tool's start: the subagent's agent_start/agent_end hooks report it, with its own id",
  },
  {
    match: { type: 'agent_event', event: { type: 'content_start', contentType: ['text', 'reasoning'] } },
    when: (record) => {
      const e = eventOf(record);
      return (e.contentType === 'text' ? e.text : e.reasoning) === '' || (e.contentType === 'text' ? e.text : e.reasoning) === undefined;
    },
    kind: 'silent',
    why: 'a text or reasoning start without its text: content_end carries it',
  },
  {
    match: { type: 'agent_event', event: { type: 'content_end', contentType: ['text', 'reasoning'] } },
    kind: 'restated',
    why: 'the text or reasoning its content_start already carried whole',
  },
  { match: { type: 'hook_event', hookEventName: 'agent_start', parentAgentId: null }, kind: 'restated', why: 'the session id (taskId), also on every later hook' },
  { match: { type: 'run_result' }, kind: 'restated', why: 'the session summary: usage and verdict (a later one replaces it)' },
];
