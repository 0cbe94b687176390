// goose toolRequest + toolResponse -> one normalized event carrying the outcome.
// Current tools are the flat developer platform tools `write{path,content}`, `edit{path,before,after}`,
// `shell{command}`, `tree{path}`, `web_fetch` (crates/goose/src/agents/platform_extensions/developer/mod.rs).
// Older releases exposed `developer__shell` and `developer__text_editor{command: view|write|str_replace|insert|
// undo_edit, path}` (reference section 12). Every other tool (extensions `<ext>__<tool>`, subagents, MCP) has no
// event type. goose prefers `rg`/`cat` through the shell for searching and reading: those stay `command`.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export const GOOSE_TOOL_KINDS = {
  shell: 'command',
  write: 'write',
  edit: 'write',
  tree: 'list',
  web_fetch: 'other',
  developer__shell: 'command',
  developer__text_editor: 'text_editor',
} as const satisfies ToolKindTable;
export const gooseToolKind = toolKindLookup(GOOSE_TOOL_KINDS);

/** text_editor sub-commands: `view` reads, the rest change the file. */
const EDITOR_COMMANDS: Readonly<Record<string, 'read' | 'write'>> = {
  view: 'read',
  write: 'write',
  str_replace: 'write',
  insert: 'write',
  undo_edit: 'write',
};

export interface GooseToolCall {
  id: string;
  name: string;
  args: JsonObject;
  item: JsonObject;
}

export interface GooseToolOutcome {
  ok: boolean;
  item: JsonObject;
}

export function unknownToolEvent(call: GooseToolCall, outcome?: GooseToolOutcome): DraftEvent {
  return unknownValue(outcome ? { toolRequest: call.item, toolResponse: outcome.item } : { toolRequest: call.item });
}

const text = z.string();
/** Per kind: the argument fields the mapping reads (extra keys are fine). */
const COMMAND = z.object({ command: text });
const PATH = z.object({ path: text });
const LIST = z.object({ path: text.optional() });
const TEXT_EDITOR = z.object({ command: text, path: text });

export function mapToolCall(call: GooseToolCall, outcome: GooseToolOutcome | undefined, cwd: string | undefined): DraftEvent {
  const { args, name: tool_name } = call;
  const is_success = outcome?.ok;
  const abs = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  switch (gooseToolKind(tool_name)) {
    case 'command': {
      const parsed = COMMAND.safeParse(args);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      return compact({ type: 'command', command: parsed.data.command, is_success, tool_name });
    }
    case 'write': {
      const parsed = PATH.safeParse(args);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      return compact({ type: 'write', path: abs(parsed.data.path)!, is_success, tool_name });
    }
    case 'list': {
      const parsed = LIST.safeParse(args);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      return compact({ type: 'list', path: abs(parsed.data.path), is_success, tool_name });
    }
    case 'text_editor': {
      const parsed = TEXT_EDITOR.safeParse(args);
      const kind = parsed.success && Object.hasOwn(EDITOR_COMMANDS, parsed.data.command) ? EDITOR_COMMANDS[parsed.data.command] : undefined;
      if (!parsed.success || kind === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: kind, path: abs(parsed.data.path)!, is_success, tool_name });
    }
    case 'other':
      return unknownToolEvent(call, outcome);
  }
}

/** Same tool, same arguments: one call printed again. */
export const callIdentity = (call: GooseToolCall): string => JSON.stringify([call.name, call.args]);
