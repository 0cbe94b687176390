// Kimi Code tool calls -> events. Tools (2.1.0's tool snapshot in the session wire file): Bash, Read,
// ReadMediaFile, Write, Edit, Glob, Grep, FetchURL, Agent, AgentSwarm, Skill, TodoList, AskUserQuestion, Task*,
// Cron*, *Goal, WaitFor, EnterPlanMode/ExitPlanMode. A call is an assistant `tool_calls` entry (arguments a JSON
// string), its result a `role: "tool"` message with the same tool_call_id, which the translator pairs.
// The stream carries no success flag and no exit code: a tool result is the tool's output text only, so no event
// claims an outcome (is_success, exit_code stay unset: unreported is not success). Skill names a skill but no file
// (the spec's skill event needs a path): unknown. Arguments are read through zod schemas (extra keys are fine): a
// call whose arguments fail them is `unknown` with its raw records, never a default.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  Bash: 'command',
  Read: 'read',
  Write: 'write',
  Edit: 'write',
  Glob: 'search',
  Grep: 'search',
  Agent: 'subagent',
  AgentSwarm: 'subagent',
} as const satisfies ToolKindTable;
export const kimiToolKind = toolKindLookup(KINDS);

/** A call as the translator holds it: name, raw arguments string, and the records that reported it. */
export interface KimiCall {
  id: string;
  name: string;
  /** The arguments as Kimi printed them (a JSON string). */
  args: string;
  records: JsonObject;
}

/** A `role: "tool"` message answering a call. */
export interface KimiOutcome {
  record: JsonObject;
}

const text = z.string().min(1);
const ARGS = {
  command: z.object({ command: text, cwd: text.optional() }),
  read: z.object({ path: text }),
  write: z.object({ path: text }),
  search: z.object({ pattern: text, path: text.optional() }),
  agent: z.object({ description: z.string().optional(), subagent_type: z.string().optional() }),
};

export const unknownCall = (call: KimiCall, outcome?: KimiOutcome): DraftEvent => unknownValue(outcome ? { ...call.records, tool: outcome.record } : call.records);

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return undefined;
  }
}

/** The call's events; `outcome` is undefined when its result never came. */
export function mapKimiCall(call: KimiCall, outcome: KimiOutcome | undefined, cwd: string | undefined): DraftEvent[] {
  const args = parseArgs(call.args);
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => [unknownCall(call, outcome)];
  const tool = call.name;
  switch (kimiToolKind(tool)) {
    case 'command': {
      const a = ARGS.command.safeParse(args);
      return a.success ? [compact({ type: 'command', command: a.data.command, working_directory: at(a.data.cwd), tool_name: tool })] : unknown();
    }
    case 'read': {
      const a = ARGS.read.safeParse(args);
      return a.success ? [compact({ type: 'read', path: at(a.data.path)!, tool_name: tool })] : unknown();
    }
    case 'write': {
      const a = ARGS.write.safeParse(args);
      return a.success ? [compact({ type: 'write', path: at(a.data.path)!, tool_name: tool })] : unknown();
    }
    case 'search': {
      const a = ARGS.search.safeParse(args);
      return a.success ? [compact({ type: 'search', query: a.data.pattern, path: at(a.data.path), tool_name: tool })] : unknown();
    }
    case 'subagent': {
      const a = ARGS.agent.safeParse(args);
      if (!a.success) return unknown();
      const name = a.data.subagent_type ?? a.data.description;
      // The call starts the subagent(s); its result is their return. Neither says whether they succeeded.
      const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: call.id, subagent_name: name });
      return outcome ? [started, compact({ type: 'orchestration' as const, action: 'subagent_completed' as const, subagent_id: call.id, subagent_name: name })] : [started];
    }
    case 'other':
      return unknown();
  }
}
