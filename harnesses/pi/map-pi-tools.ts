// Pi tool calls -> events. Pi's built-in tools (0.73.1, `--tools`): read, bash, edit, write, grep, find, ls; the
// first four are on by default. A call is announced by a `toolCall` block of the assistant message, runs between
// `tool_execution_start` (the arguments) and `tool_execution_end` (`result.content`, `isError`), which the
// translator pairs by toolCallId; this file turns a call and its outcome into one event.
// A shell command that exits non-zero makes the bash tool fail (`isError: true`) with Pi's own last line
// "Command exited with code N" after the output: the exit code is read from that line only, and only on a failed
// call (a command's own output cannot fake it on a successful one). A timeout or an abort fails the call with no
// exit code. Arguments are read through zod schemas (extra keys are fine): a call whose arguments fail them is
// `unknown` with its raw records, never a default.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, contentText } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  bash: 'command',
  read: 'read',
  write: 'write',
  edit: 'write',
  grep: 'search',
  // Files by glob pattern, like other CLIs' glob.
  find: 'search',
  ls: 'list',
} as const satisfies ToolKindTable;
export const piToolKind = toolKindLookup(KINDS);

/** A call as the translator holds it: name and arguments, and the records that reported it (for `unknown`). */
export interface PiCall {
  id: string;
  name: string;
  args: unknown;
  /** The toolCall block and/or the tool_execution_start record. */
  records: JsonObject;
}

/** A tool_execution_end: Pi's verdict, the result's text, and the record as printed. */
export interface PiOutcome {
  isError: boolean;
  text: string | undefined;
  record: JsonObject;
}

const text = z.string();
const lineNumber = z.int().positive();
/** The arguments each kind reads (Pi's tool schemas). */
const ARGS = {
  command: z.object({ command: text }),
  read: z.object({ path: text, offset: z.unknown().optional() }),
  write: z.object({ path: text }),
  search: z.object({ pattern: text, path: text.optional() }),
  list: z.object({ path: text.optional() }),
};

/** Pi's own status line after a failed command's output. */
const EXIT_LINE = /(?:^|\n)Command exited with code (-?\d+)$/;
/** The range a read returned, from Pi's own continuation notes. */
const SHOWING = /\n\n\[Showing lines (\d+)-(\d+) of \d+[^\]]*\]$/;
const MORE = /\n\n\[\d+ more lines in file\. Use offset=(\d+) to continue\.\]$/;

export const unknownCall = (call: PiCall, outcome?: PiOutcome): DraftEvent => unknownValue(outcome ? { ...call.records, tool_execution_end: outcome.record } : call.records);

/** The call's event; `outcome` is undefined when its end never came (no verdict is claimed then). */
export function mapPiCall(call: PiCall, outcome: PiOutcome | undefined, cwd: string | undefined): DraftEvent {
  const ok = outcome ? !outcome.isError : undefined;
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => unknownCall(call, outcome);
  const tool = call.name;
  switch (piToolKind(tool)) {
    case 'command': {
      const a = ARGS.command.safeParse(call.args);
      if (!a.success) return unknown();
      const exit = outcome?.isError && outcome.text !== undefined ? EXIT_LINE.exec(outcome.text) : null;
      return compact({ type: 'command', command: a.data.command, exit_code: exit ? Number(exit[1]) : undefined, is_success: ok, tool_name: tool });
    }
    case 'read': {
      const a = ARGS.read.safeParse(call.args);
      if (!a.success) return unknown();
      const done = ok === true && outcome?.text !== undefined ? outcome.text : undefined;
      const showing = done === undefined ? null : SHOWING.exec(done);
      const more = done === undefined || showing ? null : MORE.exec(done);
      // Pi starts at `offset` when it returns anything; the end is known only from its own continuation note.
      const offset = lineNumber.safeParse(a.data.offset);
      const start = showing ? Number(showing[1]) : ok === true && offset.success ? offset.data : undefined;
      const end = showing ? Number(showing[2]) : more ? Number(more[1]) - 1 : undefined;
      return compact({ type: 'read', path: at(a.data.path)!, start_line: start, end_line: end !== undefined && end >= 0 ? end : undefined, is_success: ok, tool_name: tool });
    }
    case 'write': {
      const a = ARGS.write.safeParse(call.args);
      return a.success ? compact({ type: 'write', path: at(a.data.path)!, is_success: ok, tool_name: tool }) : unknown();
    }
    case 'search': {
      const a = ARGS.search.safeParse(call.args);
      return a.success ? compact({ type: 'search', query: a.data.pattern, path: at(a.data.path), is_success: ok, tool_name: tool }) : unknown();
    }
    case 'list': {
      const a = ARGS.list.safeParse(call.args);
      return a.success ? compact({ type: 'list', path: at(a.data.path), is_success: ok, tool_name: tool }) : unknown();
    }
    case 'other':
      // Extension and custom tools: no event type of their own.
      return unknown();
  }
}

/** The text of a tool_execution_end `result` (its content's text blocks), if it has any. */
export function resultText(result: unknown): string | undefined {
  return contentText((result as { content?: unknown } | null | undefined)?.content);
}
