// The driver's ACP client (client.ts) against scripted agents, real processes over real pipes: one that asks
// permission and then stays up after its turn (a server), one that dies mid-turn, one that writes garbage and never
// answers. Each ends as the session stage needs: the turn's stop reason, a failure naming why, and a process the
// driver ends, never one left running.
import { describe, expect, it } from 'vitest';
import { runProcess } from '../process.ts';
import { AcpConversation, allowByPolicy } from './client.ts';

/** A tiny ACP agent as a Node script: answers initialize and session/new, then runs `onPrompt` for session/prompt. */
function agent(onPrompt: string): string {
  return `
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
let buf = '';
const answers = new Map();
process.stdin.on('data', (c) => {
  buf += c;
  for (let nl; (nl = buf.indexOf('\\n')) >= 0; ) {
    const m = JSON.parse(buf.slice(0, nl)); buf = buf.slice(nl + 1);
    if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === 'session/new') send({ id: m.id, result: { sessionId: 'sess-1' } });
    else if (m.method === 'session/prompt') { (${onPrompt})(m, send, answers); }
    else if (m.id !== undefined && !m.method) answers.get(m.id)?.(m.result);
  }
});
`;
}

async function converse(script: string, exitGraceMs = 200) {
  const conversation = new AcpConversation({ prompt: 'do it', cwd: '/tmp', exitGraceMs });
  const lines: string[] = [];
  const outcome = await runProcess({
    argv: [process.execPath, '-e', script],
    cwd: '/tmp',
    env: { PATH: process.env.PATH ?? '' },
    user: {},
    stdin: 'pipe',
    onStdin: (stdin) => conversation.attach(stdin),
    end: conversation.ended.signal,
    deadline: Date.now() + 20_000,
    onStdout: (line) => {
      lines.push(line.text);
      conversation.received(line);
    },
  });
  conversation.processEnded();
  return { outcome, turn: await conversation.turn, lines, session: conversation.session() };
}

describe('the ACP client', () => {
  it('answers a permission request by the run policy (allow once), gets the stop reason, and ends an agent that stays up after its turn', async () => {
    const { outcome, turn, lines, session } = await converse(
      agent(`(m, send, answers) => {
        send({ id: 100, method: 'session/request_permission', params: { sessionId: 'sess-1', toolCall: { toolCallId: 't', title: 'ls', kind: 'execute' }, options: [{ optionId: 'always', name: 'Always', kind: 'allow_always' }, { optionId: 'once', name: 'Once', kind: 'allow_once' }, { optionId: 'no', name: 'No', kind: 'reject_once' }] } });
        answers.set(100, (result) => {
          send({ method: 'session/update', params: { sessionId: 'sess-1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'chose ' + result.outcome.optionId } } } });
          send({ id: m.id, result: { stopReason: 'end_turn' } });
          process.stdin.removeAllListeners('end'); setInterval(() => {}, 1000);
        });
      }`),
    );
    expect(turn).toEqual({ stopReason: 'end_turn' });
    expect(session).toBe('sess-1');
    expect(lines.some((l) => l.includes('chose once'))).toBe(true);
    // A server that ignores its closed stdin is ended by the driver after the grace: not a cancel, not a timeout.
    expect(outcome).toMatchObject({ ended: true, cancelled: false, timedOut: false });
  });

  it('an agent that exits mid-turn fails the turn, saying so; one that writes garbage and never answers fails when it exits', async () => {
    const died = await converse(agent(`() => process.exit(0)`));
    expect(died.turn.stopReason).toBeUndefined();
    expect(died.turn.failure).toMatch(/exited before its turn ended|closed/i);
    expect(died.outcome.ended).toBeUndefined();
    const garbage = await converse(`process.stdout.write('not json\\n' + '{'.repeat(10000) + '\\n'); setTimeout(() => process.exit(3), 300);`);
    expect(garbage.turn).toEqual({ failure: expect.stringMatching(/\S/) });
    expect(garbage.outcome.code).toBe(3);
  }, 30_000);

  it('allows by policy: allow once first, else always; an agent offering only rejections is refused', () => {
    expect(allowByPolicy([{ optionId: 'a', kind: 'allow_always' }, { optionId: 'o', kind: 'allow_once' }])).toEqual({ outcome: { outcome: 'selected', optionId: 'o' } });
    expect(allowByPolicy([{ optionId: 'a', kind: 'allow_always' }, { optionId: 'r', kind: 'reject_once' }])).toEqual({ outcome: { outcome: 'selected', optionId: 'a' } });
    expect(allowByPolicy([{ optionId: 'r', kind: 'reject_once' }, { optionId: 'R', kind: 'reject_always' }])).toEqual({ outcome: { outcome: 'cancelled' } });
    expect(allowByPolicy([])).toEqual({ outcome: { outcome: 'cancelled' } });
  });
});
