// The runs table's "current activity": the latest event of a run as one short line (issue 23's table of rules).
// Pure, so the rule table is tested as a table (activity.test.ts).
import type { HarnessEvent } from '../../shared/events.ts';
import type { Activity } from '../../shared/console.ts';

/** Long enough for a real command line, short enough for a table cell. */
export const MAX_ACTIVITY_CHARS = 120;

function oneLine(text: string): string {
  const first = text.split('\n', 1)[0]!.trim();
  return first.length <= MAX_ACTIVITY_CHARS ? first : `${first.slice(0, MAX_ACTIVITY_CHARS - 1)}…`;
}

function lines(start?: number, end?: number): string {
  if (start === undefined) return '';
  return end === undefined || end === start ? `:${start}` : `:${start}-${end}`;
}

export function activityText(event: HarnessEvent): string {
  switch (event.type) {
    case 'command':
      return oneLine(`command: ${event.command}`);
    case 'read':
    case 'write':
      return oneLine(`${event.type} ${event.path}${lines(event.start_line, event.end_line)}`);
    case 'search':
      return oneLine(`search ${event.query}`);
    case 'list':
      return oneLine(event.path ? `list ${event.path}` : 'list');
    case 'skill':
      return oneLine(`skill ${event.skill_name ?? event.path}`);
    case 'orchestration': {
      const who = event.subagent_name ?? event.subagent_id ?? '';
      return oneLine(`subagent ${event.action.slice('subagent_'.length)}${who ? ` ${who}` : ''}`);
    }
    case 'system':
      return `${event.stage} ${event.status}`;
    case 'warning':
      return oneLine(`warning: ${event.message}`);
    case 'error':
      return oneLine(`error: ${event.message}`);
    case 'agent':
      return 'agent';
    case 'reasoning':
      return 'thinking';
    case 'unknown':
      return 'unknown output';
  }
}

export function activityOf(event: HarnessEvent): Activity {
  return { text: activityText(event), type: event.type, ...(event.type === 'system' ? { stage: event.stage } : {}), at: event.timestamp };
}
