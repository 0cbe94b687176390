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

export function ggTools(ctx: ToolContext) {
  return {
    shell: tool({
      description: 'Run a shell command in the workspace. Returns the exit code and combined output.',
      inputSchema: z.object({ command: z.string().describe('The command, run with /bin/sh -c') }),
      execute: async ({ command }) => {
        const r = await run(ctx, command);
        ctx.emit({ type: 'command', command, working_directory: ctx.workdir, ...(r.code !== null ? { exit_code: r.code } : {}), is_success: r.code === 0 && !r.timedOut, tool_name: 'shell' });
        return { exit_code: r.code, timed_out: r.timedOut, output: r.output };
      },
    }),
    read_file: tool({
      description: 'Read a text file, optionally a 1-based inclusive line range.',
      inputSchema: z.object({ path: z.string(), start_line: z.int().min(1).optional(), end_line: z.int().min(1).optional() }),
      execute: async ({ path, start_line, end_line }) => {
        const file = abs(ctx, path);
        try {
          const lines = (await readFile(file, 'utf8')).split('\n');
          const start = start_line ?? 1;
          const end = Math.min(end_line ?? lines.length, lines.length);
          ctx.emit({ type: 'read', path: file, start_line: start, end_line: end, is_success: true, tool_name: 'read_file' });
          return cap(ctx, lines.slice(start - 1, end).join('\n'));
        } catch (error) {
          ctx.emit({ type: 'read', path: file, is_success: false, tool_name: 'read_file' });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
    write_file: tool({
      description: 'Create or overwrite a file with the given content.',
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path, content }) => {
        const file = abs(ctx, path);
        try {
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, content);
          ctx.emit({ type: 'write', path: file, start_line: 1, end_line: Math.max(1, content.split('\n').length - (content.endsWith('\n') ? 1 : 0)), is_success: true, tool_name: 'write_file' });
          return 'written';
        } catch (error) {
          ctx.emit({ type: 'write', path: file, is_success: false, tool_name: 'write_file' });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
    edit_file: tool({
      description: 'Replace one exact occurrence of old_string with new_string in a file.',
      inputSchema: z.object({ path: z.string(), old_string: z.string().min(1), new_string: z.string() }),
      execute: async ({ path, old_string, new_string }) => {
        const file = abs(ctx, path);
        try {
          const text = await readFile(file, 'utf8');
          const at = text.indexOf(old_string);
          if (at === -1 || text.indexOf(old_string, at + 1) !== -1) throw new Error(at === -1 ? 'old_string not found' : 'old_string is not unique');
          await writeFile(file, text.slice(0, at) + new_string + text.slice(at + old_string.length));
          const line = text.slice(0, at).split('\n').length;
          ctx.emit({ type: 'write', path: file, start_line: line, end_line: line + new_string.split('\n').length - 1, is_success: true, tool_name: 'edit_file' });
          return 'edited';
        } catch (error) {
          ctx.emit({ type: 'write', path: file, is_success: false, tool_name: 'edit_file' });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
    search: tool({
      description: 'Search file contents for a regular expression (mode "grep") or file names for a glob (mode "glob").',
      inputSchema: z.object({ mode: z.enum(['grep', 'glob']), pattern: z.string().min(1), path: z.string().optional() }),
      execute: async ({ mode, pattern, path }) => {
        const root = abs(ctx, path ?? '.');
        try {
          const files: string[] = [];
          await walk(root, files, 5000);
          let hits: string[];
          if (mode === 'glob') {
            // `**/` matches any depth (a private-use placeholder keeps it apart from the single `*`).
            const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/?/g, '\uE000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\uE000/g, '(?:.*/)?')}$`);
            hits = files.map((f) => relative(root, f)).filter((f) => re.test(f));
          } else {
            const re = new RegExp(pattern);
            hits = [];
            for (const f of files) {
              const lines = (await readFile(f, 'utf8').catch(() => '')).split('\n');
              lines.forEach((l, i) => re.test(l) && hits.push(`${relative(root, f)}:${i + 1}:${l}`));
            }
          }
          ctx.emit({ type: 'search', query: pattern, path: root, is_success: true, tool_name: `search:${mode}` });
          return cap(ctx, hits.join('\n') || 'no matches');
        } catch (error) {
          ctx.emit({ type: 'search', query: pattern, path: root, is_success: false, tool_name: `search:${mode}` });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
    list_directory: tool({
      description: 'List the entries of a directory.',
      inputSchema: z.object({ path: z.string().optional() }),
      execute: async ({ path }) => {
        const dir = abs(ctx, path ?? '.');
        try {
          const entries = await readdir(dir, { withFileTypes: true });
          ctx.emit({ type: 'list', path: dir, is_success: true, tool_name: 'list_directory' });
          return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).join('\n');
        } catch (error) {
          ctx.emit({ type: 'list', path: dir, is_success: false, tool_name: 'list_directory' });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
    load_skill: tool({
      description: 'Load a skill: the SKILL.md of ~/.gg/skills/<name>.',
      inputSchema: z.object({ name: z.string().regex(/^[A-Za-z0-9._-]+$/) }),
      execute: async ({ name }) => {
        const file = join(ctx.home, '.gg', 'skills', name, 'SKILL.md');
        try {
          const text = await readFile(file, 'utf8');
          ctx.emit({ type: 'skill', path: file, skill_name: name, start_line: 1, end_line: text.split('\n').length, is_success: true, tool_name: 'load_skill' });
          return text;
        } catch (error) {
          ctx.emit({ type: 'skill', path: file, skill_name: name, is_success: false, tool_name: 'load_skill' });
          return `error: ${(error as Error).message}`;
        }
      },
    }),
  };
}
