// The human view of a normalized event stream: one line per event, reasoning collapsed to its first line unless
// asked otherwise, colours only when the destination is a terminal. Formatting is pure; callers write the lines.
import pc from 'picocolors';
import type { HarnessEvent } from '../events.ts';
import type { RunProgress } from '../run-progress.ts';

export interface HumanFormatOptions {
  color: boolean;
  /** Show reasoning in full instead of its first line. */
  fullReasoning?: boolean;
}

type Paint = (s: string) => string;

function painter(color: boolean) {
  const c = pc.createColors(color);
  return {
    dim: c.dim as Paint,
    ok: c.green as Paint,
    bad: c.red as Paint,
    warn: c.yellow as Paint,
    accent: c.cyan as Paint,
    bold: c.bold as Paint,
    magenta: c.magenta as Paint,
  };
}

function range(start?: number, end?: number): string {
  if (start === undefined) return '';
  return end === undefined || end === start ? `:${start}` : `:${start}-${end}`;
}

function outcome(p: ReturnType<typeof painter>, isSuccess: boolean | undefined): string {
  if (isSuccess === undefined) return p.dim('·');
  return isSuccess ? p.ok('✓') : p.bad('✗');
}

function firstLine(text: string): string {
  const nl = text.indexOf('\n');
  return nl === -1 ? text : `${text.slice(0, nl)} ${'…'}`;
}

export function formatEvent(event: HarnessEvent, options: HumanFormatOptions): string {
  const p = painter(options.color);
  const time = p.dim(event.timestamp.slice(11, 19));
  const label = (name: string, paint: Paint = p.accent) => paint(name.padEnd(13));
  switch (event.type) {
    case 'agent':
      return `${time} ${label('agent', p.bold)} ${event.message}`;
    case 'reasoning':
      return `${time} ${label('reasoning', p.dim)} ${p.dim(options.fullReasoning ? event.message : firstLine(event.message))}`;
    case 'command': {
      const exit = event.exit_code !== undefined ? p.dim(` (exit ${event.exit_code})`) : '';
      const cwd = event.working_directory ? p.dim(` in ${event.working_directory}`) : '';
      return `${time} ${label('command')} ${outcome(p, event.is_success)} ${event.command}${exit}${cwd}`;
    }
    case 'read':
    case 'write':
      return `${time} ${label(event.type)} ${outcome(p, event.is_success)} ${event.path}${range(event.start_line, event.end_line)}`;
    case 'search':
      return `${time} ${label('search')} ${outcome(p, event.is_success)} ${event.query}${event.path ? p.dim(` in ${event.path}`) : ''}`;
    case 'list':
      return `${time} ${label('list')} ${outcome(p, event.is_success)} ${event.path ?? p.dim('(cwd)')}`;
    case 'skill':
      return `${time} ${label('skill')} ${outcome(p, event.is_success)} ${event.skill_name ?? ''} ${p.dim(event.path)}`;
    case 'orchestration':
      return `${time} ${label('orchestration', p.magenta)} ${event.action} ${event.subagent_name ?? ''}${event.subagent_id ? p.dim(` [${event.subagent_id}]`) : ''}`;
    case 'error':
      return `${time} ${label('error', p.bad)} ${p.bad(event.message)}${event.code ? p.dim(` (${event.code})`) : ''}`;
    case 'warning':
      return `${time} ${label('warning', p.warn)} ${event.message}${event.code ? p.dim(` (${event.code})`) : ''}`;
    case 'system': {
      const paint = event.status === 'failed' ? p.bad : event.status === 'completed' ? p.ok : p.accent;
      return `${time} ${label('system', paint)} ${paint(`${event.stage} ${event.status}`)} ${p.dim(event.message)}`;
    }
    case 'unknown': {
      const raw = typeof event.raw === 'string' ? event.raw : JSON.stringify(event.raw);
      return `${time} ${label('unknown', p.warn)} ${p.dim(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw)}`;
    }
  }
}

/** A run's progress between its events (shared/run-progress.ts): the check has started. */
export function formatProgress(progress: RunProgress, options: Pick<HumanFormatOptions, 'color'>): string {
  const p = painter(options.color);
  return `${p.dim(progress.at.slice(11, 19))} ${p.magenta('check'.padEnd(13))} the sessions are over; running the test case's check${progress.command ? `: ${progress.command}` : ''}`;
}
