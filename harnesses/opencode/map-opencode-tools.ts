// OpenCode `tool_use` records -> events. Each record arrives once, after the tool finished, carrying input, output
// and metadata together. A shell command that failed is still `status: "completed"`: its exit code is
// `state.metadata.exit`; `status: "error"` means the tool itself failed.
// Each tool's fields are read through a zod schema (extra keys are fine): a part that fails it is `unknown` with
// the raw part, never a default (a float exit code, a numeric status, a string line number).
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
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
  return Object.hasOwn(KINDS, name) ? KINDS[name]! : 'other'; // own keys only: 'constructor' is no tool
}

const text = z.string();
const line = z.int().nonnegative();
const ToolPart = z.looseObject({
  tool: z.string().min(1),
  callID: text.optional(),
  state: z.looseObject({ status: text, input: z.looseObject({}), metadata: z.looseObject({}).optional() }),
});

/** Per kind: the input and metadata fields the mapping reads. */
const FIELDS = {
  command: { input: z.looseObject({ command: text, workdir: text.optional() }), metadata: z.looseObject({ exit: z.int().nullable().optional() }) },
  read: { input: z.looseObject({ filePath: text }), metadata: z.looseObject({ display: z.looseObject({ lineStart: line.optional(), lineEnd: line.optional() }).optional() }) },
  write: { input: z.looseObject({ filePath: text.optional() }), metadata: z.looseObject({ filediff: z.looseObject({ file: text.optional() }).optional() }) },
  search: { input: z.looseObject({ pattern: text, path: text.optional() }), metadata: z.looseObject({}) },
  list: { input: z.looseObject({ path: text.optional() }), metadata: z.looseObject({}) },
  skill: { input: z.looseObject({ name: text.optional() }), metadata: z.looseObject({ dir: text.min(1), name: text.optional() }) },
  subagent: { input: z.looseObject({ subagent_type: text.optional(), description: text.optional() }), metadata: z.looseObject({ sessionId: text.optional() }) },
} as const;

type Fields<K extends keyof typeof FIELDS> = { input: z.infer<(typeof FIELDS)[K]['input']>; metadata: z.infer<(typeof FIELDS)[K]['metadata']> };

function read<K extends keyof typeof FIELDS>(kind: K, input: JsonObject, metadata: JsonObject): Fields<K> | undefined {
  const i = FIELDS[kind].input.safeParse(input);
  const m = FIELDS[kind].metadata.safeParse(metadata);
  return i.success && m.success ? ({ input: i.data, metadata: m.data } as Fields<K>) : undefined;
}

export function mapToolPart(part: JsonObject, cwd: string | undefined): DraftEvent[] {
  const parsed = ToolPart.safeParse(part);
  if (!parsed.success) return [unknownValue(part)];
  const { tool, callID, state } = parsed.data;
  const finished = state.status === 'completed' || state.status === 'error';
  const ok = finished ? state.status === 'completed' : undefined;
  const meta = state.metadata ?? {};
  const abs = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const kind = opencodeToolKind(tool);
  if (kind === 'other') {
    // todowrite, todoread, webfetch, websearch, codesearch, question, MCP tools: no event type of their own.
    return [unknownValue(part)];
  }
  switch (kind) {
    case 'command': {
      const f = read(kind, state.input, meta);
      if (!f) return [unknownValue(part)];
      const exit = f.metadata.exit ?? undefined;
      return [compact({ type: 'command', command: f.input.command, working_directory: abs(f.input.workdir), exit_code: exit, is_success: ok === undefined ? undefined : ok && (exit === undefined || exit === 0), tool_name: tool })];
    }
    case 'read': {
      const f = read(kind, state.input, meta);
      if (!f) return [unknownValue(part)];
      const display = f.metadata.display;
      return [compact({ type: 'read', path: abs(f.input.filePath)!, start_line: display?.lineStart, end_line: display?.lineEnd, is_success: ok, tool_name: tool })];
    }
    case 'write': {
      const f = read(kind, state.input, meta);
      const file = f ? (abs(f.input.filePath) ?? f.metadata.filediff?.file) : undefined;
      return file === undefined ? [unknownValue(part)] : [compact({ type: 'write', path: file, is_success: ok, tool_name: tool })];
    }
    case 'search': {
      const f = read(kind, state.input, meta);
      return f ? [compact({ type: 'search', query: f.input.pattern, path: abs(f.input.path), is_success: ok, tool_name: tool })] : [unknownValue(part)];
    }
    case 'list': {
      const f = read(kind, state.input, meta);
      return f ? [compact({ type: 'list', path: abs(f.input.path), is_success: ok, tool_name: tool })] : [unknownValue(part)];
    }
    case 'skill': {
      const f = read(kind, state.input, meta);
      if (!f) return [unknownValue(part)];
      return [compact({ type: 'skill', path: `${f.metadata.dir.replace(/\/$/, '')}/SKILL.md`, skill_name: f.input.name ?? f.metadata.name, is_success: ok, tool_name: tool })];
    }
    case 'subagent': {
      // Subagent sessions do not stream: the finished `task` record brackets the subagent.
      const f = read(kind, state.input, meta);
      if (!f) return [unknownValue(part)];
      const id = f.metadata.sessionId ?? callID;
      const name = f.input.subagent_type ?? f.input.description;
      const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: id, subagent_name: name });
      if (!finished) return [started];
      return [started, compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name: name, is_success: ok })];
    }
  }
}
