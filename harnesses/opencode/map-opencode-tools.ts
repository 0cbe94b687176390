// OpenCode `tool_use` records -> events. Each record arrives once, after the tool finished, carrying input, output
// and metadata together. A shell command that failed is still `status: "completed"`: its exit code is
// `state.metadata.exit`; `status: "error"` means the tool itself failed.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, count, num, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

export type OpencodeToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'skill' | 'subagent' | 'other';

const KINDS: Record<string, OpencodeToolKind> = {
  bash: 'command',
  read: 'read',
  write: 'write',
  edit: 'write',
  multiedit: 'write',
  patch: 'write',
  apply_patch: 'write',
  grep: 'search',
  glob: 'search',
  list: 'list',
  skill: 'skill',
  task: 'subagent',
};

export function opencodeToolKind(name: string): OpencodeToolKind {
  return KINDS[name] ?? 'other';
}

export function mapToolPart(part: JsonObject, cwd: string | undefined): DraftEvent[] {
  const tool = str(part.tool);
  const state = obj(part.state);
  const input = obj(state?.input);
  if (!tool || !state || !input) return [unknownValue(part)];
  const status = str(state.status);
  const finished = status === 'completed' || status === 'error';
  const ok = finished ? status === 'completed' : undefined;
  const meta = obj(state.metadata) ?? {};
  const path = (key: string) => {
    const v = str(input[key]);
    return v === undefined ? undefined : absolutePath(v, cwd);
  };
  switch (opencodeToolKind(tool)) {
    case 'command': {
      const command = str(input.command);
      if (command === undefined) return [unknownValue(part)];
      const exit = num(meta.exit);
      return [compact({ type: 'command', command, working_directory: path('workdir'), exit_code: exit, is_success: ok === undefined ? undefined : ok && (exit === undefined || exit === 0), tool_name: tool })];
    }
    case 'read': {
      const file = path('filePath');
      if (file === undefined) return [unknownValue(part)];
      const display = obj(meta.display);
      return [compact({ type: 'read', path: file, start_line: count(display?.lineStart), end_line: count(display?.lineEnd), is_success: ok, tool_name: tool })];
    }
    case 'write': {
      const file = path('filePath') ?? str(obj(meta.filediff)?.file);
      return file === undefined ? [unknownValue(part)] : [compact({ type: 'write', path: file, is_success: ok, tool_name: tool })];
    }
    case 'search': {
      const query = str(input.pattern);
      return query === undefined ? [unknownValue(part)] : [compact({ type: 'search', query, path: path('path'), is_success: ok, tool_name: tool })];
    }
    case 'list':
      return [compact({ type: 'list', path: path('path'), is_success: ok, tool_name: tool })];
    case 'skill': {
      const dir = str(meta.dir);
      if (!dir) return [unknownValue(part)];
      return [compact({ type: 'skill', path: `${dir.replace(/\/$/, '')}/SKILL.md`, skill_name: str(input.name) ?? str(meta.name), is_success: ok, tool_name: tool })];
    }
    case 'subagent': {
      // Subagent sessions do not stream: the finished `task` record brackets the subagent.
      const id = str(meta.sessionId) ?? str(part.callID);
      const name = str(input.subagent_type) ?? str(input.description);
      const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: id, subagent_name: name });
      if (!finished) return [started];
      return [started, compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name: name, is_success: ok })];
    }
    case 'other':
      // todowrite, todoread, webfetch, websearch, codesearch, question, MCP tools: no event type of their own.
      return [unknownValue(part)];
  }
}
