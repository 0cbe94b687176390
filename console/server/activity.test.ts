import { describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../shared/events.ts';
import { Activity } from '../../shared/console.ts';
import { MAX_ACTIVITY_CHARS, activityOf, activityText } from './activity.ts';

const timestamp = '2026-12-05T04:00:00.000Z';
const e = (event: Record<string, unknown>) => ({ timestamp, ...event }) as HarnessEvent;

describe('activityText', () => {
  it.each([
    [{ type: 'command', command: 'npm test' }, 'command: npm test'],
    [{ type: 'command', command: 'set -e\nnpm ci\nnpm test' }, 'command: set -e'],
    [{ type: 'read', path: 'src/a.ts', start_line: 10, end_line: 20 }, 'read src/a.ts:10-20'],
    [{ type: 'read', path: 'src/a.ts', start_line: 7 }, 'read src/a.ts:7'],
    [{ type: 'write', path: 'README.md' }, 'write README.md'],
    [{ type: 'search', query: 'TODO', path: 'src' }, 'search TODO'],
    [{ type: 'list', path: 'src' }, 'list src'],
    [{ type: 'skill', path: 'skills/pdf/SKILL.md', skill_name: 'pdf' }, 'skill pdf'],
    [{ type: 'orchestration', action: 'subagent_started', subagent_name: 'explorer' }, 'subagent started explorer'],
    [{ type: 'orchestration', action: 'subagent_completed', subagent_id: 'a1' }, 'subagent completed a1'],
    [{ type: 'system', stage: 'install_harness', status: 'started', message: 'npm i' }, 'install_harness started'],
    [{ type: 'warning', message: 'rate limited\nretrying' }, 'warning: rate limited'],
    [{ type: 'error', message: 'boom' }, 'error: boom'],
    [{ type: 'agent', message: 'Here is the plan' }, 'agent'],
    [{ type: 'reasoning', message: 'secret thoughts' }, 'thinking'],
    [{ type: 'unknown', raw: { x: 1 } }, 'unknown output'],
  ])('%j -> %s', (event, text) => {
    expect(activityText(e(event))).toBe(text);
  });

  it('cuts a long first line to the limit with an ellipsis', () => {
    const text = activityText(e({ type: 'command', command: 'x'.repeat(500) }));
    expect(text).toHaveLength(MAX_ACTIVITY_CHARS);
    expect(text.endsWith('…')).toBe(true);
  });

  it('activityOf is a valid Activity, with the stage of a system event and the event time', () => {
    const a = activityOf(e({ type: 'system', stage: 'teardown', status: 'completed', message: '' }));
    expect(Activity.parse(a)).toEqual({ text: 'teardown completed', type: 'system', stage: 'teardown', at: timestamp });
    expect(activityOf(e({ type: 'agent', message: 'm' }))).not.toHaveProperty('stage');
  });
});
