// Cline tool content -> events. Batch tools carry several operations: one event per element, matched by order
// (run_commands: commands[i] / output[i]; read_files: files[i]; search_codebase: queries[i]). Exit codes only in
// the documented text "Command exited with code N". Skills name no file: unknown.
import type { DraftEvent } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  run_commands: 'command',
  read_files: 'read',
  editor: 'write',
  search_codebase: 'search',
  spawn_agent: 'subagent',
} as const satisfies ToolKindTable;
export const clineToolKind = toolKindLookup(KINDS);

const lineNumber = z.int().nonnegative();
/** What each kind reads of a tool's input and output; a tool that fails them is `unknown` (issue 19, finding 7). */
// A batch of no operations would report nothing at all: it is shown raw instead (min(1)).
const INPUTS = {
  command: z.object({ commands: z.array(z.string()).min(1) }),
  read: z.object({ files: z.array(z.object({ path: z.string().min(1), start_line: lineNumber.optional(), end_line: lineNumber.optional() })).min(1) }),
  write: z.object({ path: z.string() }),
  search: z.object({ queries: z.array(z.string()).min(1) }),
};
const Result = z.object({ success: z.boolean().optional(), query: z.string().optional(), result: z.string().optional(), error: z.string().optional() });
/** Batch tools answer with one result per operation, in order; absent when the session ended first. */
const BatchOutput = z.array(Result).optional();
const SingleOutput = Result.optional();

/** `output` is the tool's content_end output, undefined when the session ended before it came. */
export function mapClineTool(name: string, input: JsonObject, output: unknown, cwd: string | undefined): DraftEvent[] {
  const raw = () => [unknownValue({ tool: name, input, output: output ?? null })];
  const batch = BatchOutput.safeParse(output);
  const at = (i: number) => (batch.success ? batch.data?.[i] : undefined);
  switch (clineToolKind(name)) {
    case 'command': {
      const parsed = INPUTS.command.safeParse(input);
      if (!parsed.success || !batch.success) return raw();
      return parsed.data.commands.map((command, i) => {
        const r = at(i);
        const exit = /Command exited with code (-?\d+)/.exec(`${r?.error ?? ''}\n${r?.result ?? ''}`);
        return compact({ type: 'command', command: r?.query ?? command, exit_code: exit ? Number(exit[1]) : undefined, is_success: r?.success, tool_name: name });
      });
    }
    case 'read': {
      const parsed = INPUTS.read.safeParse(input);
      if (!parsed.success || !batch.success) return raw();
      return parsed.data.files.map((f, i) => compact({ type: 'read', path: absolutePath(f.path, cwd), start_line: f.start_line, end_line: f.end_line, is_success: at(i)?.success, tool_name: name }));
    }
    case 'write': {
      const parsed = INPUTS.write.safeParse(input);
      const result = SingleOutput.safeParse(output);
      if (!parsed.success || !result.success) return raw();
      return [compact({ type: 'write', path: absolutePath(parsed.data.path, cwd), is_success: result.data?.success, tool_name: name })];
    }
    case 'search': {
      const parsed = INPUTS.search.safeParse(input);
      if (!parsed.success || !batch.success) return raw();
      return parsed.data.queries.map((query, i) => compact({ type: 'search', query, path: cwd, is_success: at(i)?.success, tool_name: name }));
    }
    case 'subagent':
      return []; // reported by the agent_start / agent_end hooks, with the subagent's own id
    case 'other':
      // skills (no file named), fetch_web_content, ask_question, team_*: no event type of their own.
      return raw();
  }
}
