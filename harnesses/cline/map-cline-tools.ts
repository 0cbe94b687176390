// Cline tool content -> events. Batch tools carry several operations: one event per element, matched by order
// (run_commands: commands[i] / output[i]; read_files: files[i]; search_codebase: queries[i]). Exit codes only in
// the documented text "Command exited with code N". Skills name no file: unknown.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, arr, bool, compact, count, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

export type ClineToolKind = 'command' | 'read' | 'write' | 'search' | 'subagent' | 'other';

const KINDS: Record<string, ClineToolKind> = {
  run_commands: 'command',
  read_files: 'read',
  editor: 'write',
  search_codebase: 'search',
  spawn_agent: 'subagent',
};

export function clineToolKind(name: string): ClineToolKind {
  return KINDS[name] ?? 'other';
}

export function mapClineTool(name: string, input: JsonObject, output: unknown, cwd: string | undefined): DraftEvent[] {
  const results = arr(output) ?? [];
  const at = (i: number) => obj(results[i]);
  const raw = () => [unknownValue({ tool: name, input, output: output ?? null })];
  switch (clineToolKind(name)) {
    case 'command': {
      const commands = arr(input.commands)?.map(str);
      if (!commands || commands.some((c) => c === undefined)) return raw();
      return commands.map((command, i) => {
        const r = at(i);
        const exit = /Command exited with code (-?\d+)/.exec(`${str(r?.error) ?? ''}\n${str(r?.result) ?? ''}`);
        return compact({ type: 'command', command: str(r?.query) ?? command!, exit_code: exit ? Number(exit[1]) : undefined, is_success: bool(r?.success), tool_name: name });
      });
    }
    case 'read': {
      const files = arr(input.files)?.map(obj);
      if (!files || files.some((f) => !str(f?.path))) return raw();
      return files.map((f, i) => compact({ type: 'read', path: absolutePath(str(f!.path)!, cwd), start_line: count(f!.start_line), end_line: count(f!.end_line), is_success: bool(at(i)?.success), tool_name: name }));
    }
    case 'write': {
      const path = str(input.path);
      return path === undefined ? raw() : [compact({ type: 'write', path: absolutePath(path, cwd), is_success: bool(obj(output)?.success), tool_name: name })];
    }
    case 'search': {
      const queries = arr(input.queries)?.map(str);
      if (!queries || queries.some((q) => q === undefined)) return raw();
      return queries.map((query, i) => compact({ type: 'search', query: query!, path: cwd, is_success: bool(at(i)?.success), tool_name: name }));
    }
    case 'subagent':
      return []; // reported by the agent_start / agent_end hooks, with the subagent's own id
    case 'other':
      // skills (no file named), fetch_web_content, ask_question, team_*: no event type of their own.
      return raw();
  }
}
