// gg's tools, each reporting its own normalized event with the outcome: shell command (in the workspace, with a
// timeout and an output cap), read (line ranges), write, edit (exact replace), search (grep / glob), list, skill.
// The agent loop runs as the run user inside the workspace the driver prepared, so the tools need no sandbox of
// their own beyond staying relative to it.
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { tool } from 'ai';
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';

export interface ToolContext {
  workdir: string;
  home: string;
  emit(event: DraftEvent): void;
  commandTimeoutMs: number;
  maxOutputChars: number;
  /** The session's end (budget or signal): running commands are killed with it, not left behind. */
  signal?: AbortSignal;
}

const abs = (ctx: ToolContext, p: string) => (isAbsolute(p) ? p : resolve(ctx.workdir, p));
const cap = (ctx: ToolContext, text: string) => (text.length > ctx.maxOutputChars ? `${text.slice(0, ctx.maxOutputChars)}\n…[output truncated at ${ctx.maxOutputChars} characters]` : text);

function run(ctx: ToolContext, command: string): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((done) => {
    // Its own process group, so a timeout or the session's end kills what the command started too.
    const child = spawn('/bin/sh', ['-c', command], { cwd: ctx.workdir, env: process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let timedOut = false;
    const collect = (chunk: Buffer) => {
      if (output.length <= ctx.maxOutputChars) output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, ctx.commandTimeoutMs);
    if (ctx.signal?.aborted) killGroup();
    ctx.signal?.addEventListener('abort', killGroup, { once: true });
    child.on('close', (code) => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', killGroup);
      done({ code, output: cap(ctx, output), timedOut });
    });
  });
}

async function walk(dir: string, out: string[], limit: number): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (out.length >= limit) return;
    if (entry.name === '.git' || entry.name === 'node_modules') continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) await walk(p, out, limit);
    else out.push(p);
  }
}

/**
 * A tool's work and its event: the event the work returns on success; `failure` (the same event without the details
 * only success knows) when it throws, and the model gets `error: <message>` to act on.
 */
async function reported<T>(ctx: ToolContext, failure: DraftEvent, work: () => Promise<{ event: DraftEvent; result: T }>): Promise<T | string> {
  try {
    const { event, result } = await work();
    ctx.emit(event);
    return result;
  } catch (error) {
    ctx.emit(failure);
    return `error: ${(error as Error).message}`;
  }
}

/** The last line's number of written text (a final newline ends a line, it starts none); 1 for an empty file. */
const lastLine = (content: string) => Math.max(1, content.split('\n').length - (content.endsWith('\n') ? 1 : 0));

/** A glob as an anchored regular expression over relative paths: `*` and `?` stay within one path segment. */
function globRegExp(pattern: string): RegExp {
  // `**/` matches any depth (a private-use placeholder keeps it apart from the single `*`).
  return new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/?/g, '\uE000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\uE000/g, '(?:.*/)?')}$`);
}

/** Every matching line as `path:line:text`, paths relative to the search root; an unreadable file has none. */
async function grepFiles(root: string, files: string[], re: RegExp): Promise<string[]> {
  const hits: string[] = [];
  for (const f of files) {
    const lines = (await readFile(f, 'utf8').catch(() => '')).split('\n');
    lines.forEach((l, i) => re.test(l) && hits.push(`${relative(root, f)}:${i + 1}:${l}`));
  }
  return hits;
}

function shellTool(ctx: ToolContext) {
  return tool({
    description: 'Run a shell command in the workspace. Returns the exit code and combined output.',
    inputSchema: z.object({ command: z.string().describe('The command, run with /bin/sh -c') }),
    execute: async ({ command }) => {
      const r = await run(ctx, command);
      ctx.emit({ type: 'command', command, working_directory: ctx.workdir, ...(r.code !== null ? { exit_code: r.code } : {}), is_success: r.code === 0 && !r.timedOut, tool_name: 'shell' });
      return { exit_code: r.code, timed_out: r.timedOut, output: r.output };
    },
  });
}

function readFileTool(ctx: ToolContext) {
  return tool({
    description: 'Read a text file, optionally a 1-based inclusive line range.',
    inputSchema: z.object({ path: z.string(), start_line: z.int().min(1).optional(), end_line: z.int().min(1).optional() }),
    execute: async ({ path, start_line, end_line }) => {
      const file = abs(ctx, path);
      return reported(ctx, { type: 'read', path: file, is_success: false, tool_name: 'read_file' }, async () => {
        const lines = (await readFile(file, 'utf8')).split('\n');
        const start = start_line ?? 1;
        const end = Math.min(end_line ?? lines.length, lines.length);
        const event: DraftEvent = { type: 'read', path: file, start_line: start, end_line: end, is_success: true, tool_name: 'read_file' };
        return { event, result: cap(ctx, lines.slice(start - 1, end).join('\n')) };
      });
    },
  });
}

function writeFileTool(ctx: ToolContext) {
  return tool({
    description: 'Create or overwrite a file with the given content.',
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) => {
      const file = abs(ctx, path);
      return reported(ctx, { type: 'write', path: file, is_success: false, tool_name: 'write_file' }, async () => {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
        return { event: { type: 'write', path: file, start_line: 1, end_line: lastLine(content), is_success: true, tool_name: 'write_file' }, result: 'written' };
      });
    },
  });
}

function editFileTool(ctx: ToolContext) {
  return tool({
    description: 'Replace one exact occurrence of old_string with new_string in a file.',
    inputSchema: z.object({ path: z.string(), old_string: z.string().min(1), new_string: z.string() }),
    execute: async ({ path, old_string, new_string }) => {
      const file = abs(ctx, path);
      return reported(ctx, { type: 'write', path: file, is_success: false, tool_name: 'edit_file' }, async () => {
        const text = await readFile(file, 'utf8');
        const at = text.indexOf(old_string);
        if (at === -1 || text.indexOf(old_string, at + 1) !== -1) throw new Error(at === -1 ? 'old_string not found' : 'old_string is not unique');
        await writeFile(file, text.slice(0, at) + new_string + text.slice(at + old_string.length));
        const line = text.slice(0, at).split('\n').length;
        const event: DraftEvent = { type: 'write', path: file, start_line: line, end_line: line + new_string.split('\n').length - 1, is_success: true, tool_name: 'edit_file' };
        return { event, result: 'edited' };
      });
    },
  });
}

function searchTool(ctx: ToolContext) {
  return tool({
    description: 'Search file contents for a regular expression (mode "grep") or file names for a glob (mode "glob").',
    inputSchema: z.object({ mode: z.enum(['grep', 'glob']), pattern: z.string().min(1), path: z.string().optional() }),
    execute: async ({ mode, pattern, path }) => {
      const root = abs(ctx, path ?? '.');
      const tool_name = `search:${mode}`;
      return reported(ctx, { type: 'search', query: pattern, path: root, is_success: false, tool_name }, async () => {
        const files: string[] = [];
        await walk(root, files, 5000);
        let hits: string[];
        if (mode === 'glob') {
          const re = globRegExp(pattern);
          hits = files.map((f) => relative(root, f)).filter((f) => re.test(f));
        } else hits = await grepFiles(root, files, new RegExp(pattern));
        return { event: { type: 'search', query: pattern, path: root, is_success: true, tool_name }, result: cap(ctx, hits.join('\n') || 'no matches') };
      });
    },
  });
}

function listDirectoryTool(ctx: ToolContext) {
  return tool({
    description: 'List the entries of a directory.',
    inputSchema: z.object({ path: z.string().optional() }),
    execute: async ({ path }) => {
      const dir = abs(ctx, path ?? '.');
      return reported(ctx, { type: 'list', path: dir, is_success: false, tool_name: 'list_directory' }, async () => {
        const entries = await readdir(dir, { withFileTypes: true });
        return { event: { type: 'list', path: dir, is_success: true, tool_name: 'list_directory' }, result: entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).join('\n') };
      });
    },
  });
}

function loadSkillTool(ctx: ToolContext) {
  return tool({
    description: 'Load a skill: the SKILL.md of ~/.gg/skills/<name>.',
    inputSchema: z.object({ name: z.string().regex(/^[A-Za-z0-9._-]+$/) }),
    execute: async ({ name }) => {
      const file = join(ctx.home, '.gg', 'skills', name, 'SKILL.md');
      return reported(ctx, { type: 'skill', path: file, skill_name: name, is_success: false, tool_name: 'load_skill' }, async () => {
        const text = await readFile(file, 'utf8');
        return { event: { type: 'skill', path: file, skill_name: name, start_line: 1, end_line: text.split('\n').length, is_success: true, tool_name: 'load_skill' }, result: text };
      });
    },
  });
}

/** The tools by the names the model calls them. */
export function ggTools(ctx: ToolContext) {
  return {
    shell: shellTool(ctx),
    read_file: readFileTool(ctx),
    write_file: writeFileTool(ctx),
    edit_file: editFileTool(ctx),
    search: searchTool(ctx),
    list_directory: listDirectoryTool(ctx),
    load_skill: loadSkillTool(ctx),
  };
}
