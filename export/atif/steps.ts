// The fold from our events to ATIF steps. An agent turn is read off the event order, the way every harness
// prints one: reasoning, then the message, then the tool calls it made. A reasoning or message after tool calls,
// or an event of another session, starts the next turn. Errors, warnings and failed driver stages are system
// steps at the point they happened. Subagents are tool calls whose result is filled in when they finish.
// Every step's timestamp is the observed time of its first event; nothing is dated that we did not see.
import type { EventOf, HarnessEvent } from '../../shared/events.ts';
import type { AtifObservationResult, AtifStep, AtifToolCall, JsonValue } from './schema.ts';
import { defined, isToolEvent, toolCall, toolResult } from './tool-calls.ts';

/** Our event types ATIF has no place for: counted in the trajectory's extra, never turned into steps. */
export interface LeftOut {
  /** Lines the translator did not understand (raw harness output, possibly huge or hostile). */
  unknown: number;
  /** Driver stages that started or completed (their timings are in extra.tcab.stages). */
  system: number;
}

interface OpenTurn {
  step: AtifStep;
  sessionId: string | undefined;
  phase: 'thinking' | 'speaking' | 'acting';
  reasoning: string[];
  calls: AtifToolCall[];
  results: AtifObservationResult[];
}

interface PendingSubagent {
  turn: OpenTurn;
  callId: string;
}

export class StepFold {
  readonly steps: AtifStep[] = [];
  readonly leftOut: LeftOut = { unknown: 0, system: 0 };
  private turn: OpenTurn | undefined;
  private readonly subagents = new Map<string, PendingSubagent>();
  /** Subagents started without an id: a finish without an id closes the latest of them. */
  private readonly anonymous: PendingSubagent[] = [];

  /** The trajectory's session id: a step of another session says its own in extra. */
  private readonly sessionId: string | undefined;

  constructor(sessionId: string | undefined) {
    this.sessionId = sessionId;
  }

  /** @param position 1-based position of the event in the run's stream: the document-local tool call id. */
  add(event: HarnessEvent, position: number): void {
    switch (event.type) {
      case 'reasoning': {
        const turn = this.turn?.phase === 'thinking' && this.sameSession(event) ? this.turn : this.open(event, 'thinking');
        turn.reasoning.push(event.message);
        return;
      }
      case 'agent': {
        const turn = this.turn?.phase === 'thinking' && this.sameSession(event) ? this.turn : this.open(event, 'speaking');
        turn.step.message = event.message;
        turn.phase = 'speaking';
        return;
      }
      case 'orchestration':
        return this.orchestration(event, `tcab-event-${position}`);
      case 'error':
      case 'warning':
        return this.system(event, event.message, defined({ tcab_type: event.type, code: event.code, session_id: this.otherSession(event.session_id) }));
      case 'system':
        if (event.status !== 'failed') {
          this.leftOut.system += 1;
          return;
        }
        return this.system(event, `${event.stage} failed: ${event.message}`, { tcab_type: 'system', stage: event.stage });
      case 'unknown':
        this.leftOut.unknown += 1;
        return;
      default: {
        if (!isToolEvent(event)) return;
        const callId = `tcab-event-${position}`;
        const turn = this.acting(event);
        turn.calls.push(toolCall(event, callId));
        const result = toolResult(event, callId);
        if (result) turn.results.push(result);
      }
    }
  }

  /** The steps, every turn closed: call once, after the last event. */
  finish(): AtifStep[] {
    this.close();
    return this.steps;
  }

  private orchestration(event: EventOf<'orchestration'>, callId: string): void {
    if (event.action === 'subagent_started') {
      const turn = this.acting(event);
      turn.calls.push({ tool_call_id: callId, function_name: 'subagent', arguments: defined({ subagent_id: event.subagent_id, subagent_name: event.subagent_name }), extra: { tcab_kind: 'subagent' } });
      const pending = { turn, callId };
      if (event.subagent_id === undefined) this.anonymous.push(pending);
      else this.subagents.set(event.subagent_id, pending);
      return;
    }
    const status = event.action === 'subagent_completed' ? 'completed' : 'failed';
    const pending = event.subagent_id === undefined ? this.anonymous.pop() : this.subagents.get(event.subagent_id);
    if (event.subagent_id !== undefined) this.subagents.delete(event.subagent_id);
    const seen = defined({ status, is_success: event.is_success, finished_at: event.timestamp });
    // The result belongs to the step of its call (ATIF links a result only to a call of its own step).
    if (pending) {
      pending.turn.results.push({ source_call_id: pending.callId, extra: seen });
      if (pending.turn !== this.turn) pending.turn.step.observation = { results: pending.turn.results };
    }
    else this.system(event, `subagent ${event.subagent_name ?? event.subagent_id ?? ''} ${status}`.replace(/ +/g, ' '), defined({ tcab_type: 'orchestration', subagent_id: event.subagent_id, subagent_name: event.subagent_name, ...seen }));
  }

  private sameSession(event: { session_id?: string }): boolean {
    return event.session_id === undefined || this.turn?.sessionId === undefined || event.session_id === this.turn.sessionId;
  }

  private otherSession(sessionId: string | undefined): string | undefined {
    return sessionId !== undefined && sessionId !== this.sessionId ? sessionId : undefined;
  }

  private acting(event: HarnessEvent & { session_id?: string }): OpenTurn {
    const turn = this.turn && this.sameSession(event) ? this.turn : this.open(event, 'acting');
    turn.phase = 'acting';
    return turn;
  }

  private open(event: { timestamp: string; session_id?: string }, phase: OpenTurn['phase']): OpenTurn {
    this.close();
    const step: AtifStep = { step_id: this.steps.length + 1, timestamp: event.timestamp, source: 'agent', message: '' };
    const other = this.otherSession(event.session_id);
    if (other !== undefined) step.extra = { session_id: other };
    this.steps.push(step);
    this.turn = { step, sessionId: event.session_id, phase, reasoning: [], calls: [], results: [] };
    return this.turn;
  }

  private close(): void {
    const turn = this.turn;
    if (!turn) return;
    if (turn.reasoning.length > 0) turn.step.reasoning_content = turn.reasoning.join('\n\n');
    if (turn.calls.length > 0) turn.step.tool_calls = turn.calls;
    if (turn.results.length > 0) turn.step.observation = { results: turn.results };
    this.turn = undefined;
  }

  private system(event: { timestamp: string }, message: string, extra: Record<string, JsonValue>): void {
    this.close();
    this.steps.push({ step_id: this.steps.length + 1, timestamp: event.timestamp, source: 'system', message, extra });
  }

  /** Appends a step made outside the event stream (the prompt, the run's outcome). */
  push(step: Omit<AtifStep, 'step_id'>): void {
    this.close();
    this.steps.push({ step_id: this.steps.length + 1, ...step });
  }
}
