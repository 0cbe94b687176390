// A run's events as OpenTelemetry span operations (GenAI semantic conventions): a pure fold, fed the sequenced,
// already-scrubbed events a sink receives and then the run result; the SDK shell (driver/sinks/otel.ts) replays the
// operations on real spans. The tree:
//   invoke_workflow tcab.run            the run: outcome, harness, model, usage and cost of the whole run
//   ├─ tcab.stage <stage>               install_harness, probe_harness, init_test_case, teardown (started -> ended)
//   └─ invoke_agent <harness>           one per harness session (a new session id opens the next one)
//      ├─ execute_tool <tool name>      command/read/write/search/list/skill
//      └─ invoke_agent <subagent>       subagent_started -> subagent_completed/failed
// agent, reasoning, warning and error events are span events of their session (of the run outside a session).
// Times are only ever ones we observed: a tool event is emitted when the tool has finished (the translators pair
// the call with its result), so its span has no duration rather than an invented start. Session spans end when
// the result arrives (their usage and cost are only known then), at the last time their session was observed.
// A sink may leave events out of the trace (over a budget): `leftOut` keeps the sessions and their times exactly as
// the events would have, and the session span counts what it is missing (tcab.trace.*_left_out).
import type { HarnessEvent, EventOf } from '../../shared/events.ts';
import type { RunResult, SessionRecord } from '../../shared/run.ts';
import { addTokens } from '../../shared/usage.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import { GEN_AI, OPERATION, clip, costAttributes, defined, usageAttributes, wireAttributes } from './attributes.ts';
import type { SpanAttributes } from './attributes.ts';

/** What the shell does, in order. Span ids are this fold's own; times are ms since the epoch. */
export type SpanOperation =
  | { op: 'start'; span: string; parent: string | null; name: string; at: number; attributes: SpanAttributes }
  | { op: 'event'; span: string; name: string; at: number; attributes: SpanAttributes }
  | { op: 'set'; span: string; attributes: SpanAttributes }
  | { op: 'end'; span: string; at: number; error?: string };

export interface RunIdentity {
  runId: string;
  harness: string;
  model: string;
  /** When the run began (ms since the epoch, the driver's clock as it set up its sinks): the run span's start. */
  startedAt?: number;
}

export const RUN_SPAN = 'run';
/** The event types that become execute_tool spans. */
export const TOOL_EVENT_TYPES: ReadonlySet<string> = new Set(['command', 'read', 'write', 'search', 'list', 'skill']);
type ToolEvent = EventOf<'command' | 'read' | 'write' | 'search' | 'list' | 'skill'>;

interface Session {
  span: string;
  id: string | null;
  last: number;
  /** Events of this session the sink left out of the trace (over its budget), by kind. */
  toolsLeftOut: number;
  messagesLeftOut: number;
}

/**
 * Events a sink left out of the trace (driver/sinks/otel-budget.ts), told in one piece per run of them in one
 * session: when the last of them happened, in which session, and how many tool calls and messages they were.
 */
export interface LeftOut {
  at: number;
  sessionId: string | undefined;
  tools: number;
  messages: number;
}

/** Ids of execute_tool spans start with this. */
const TOOL_SPAN_PREFIX = 'tool:';

export class RunSpanFold {
  private readonly identity: RunIdentity;
  /** Open spans: their start time (an end is never before it). */
  private readonly open = new Map<string, number>();
  private readonly sessions: Session[] = [];
  private current: Session | undefined;
  private readonly subagents = new Map<string, { span: string; session: Session }>();
  private subagentCount = 0;
  /** The open span of each stage (a stage may run again: each run of it is a span of its own). */
  private readonly stages = new Map<string, string>();
  private spanCount = 0;
  private done = false;

  constructor(identity: RunIdentity) {
    this.identity = identity;
  }

  /** The operations one event adds (none once the run is over). */
  event(seq: number, event: HarnessEvent): SpanOperation[] {
    if (this.done) return [];
    const at = Date.parse(event.timestamp);
    const ops: SpanOperation[] = [];
    this.ensureRun(at, ops);
    if (event.type === 'system') {
      this.stage(event, at, ops);
      return ops;
    }
    const inSession = event.session_id !== undefined || !(event.type === 'warning' || event.type === 'error') || this.current !== undefined;
    const parent = inSession ? this.sessionFor(event.session_id, at, ops) : undefined;
    const span = parent?.span ?? RUN_SPAN;
    switch (event.type) {
      case 'agent':
      case 'reasoning':
        ops.push({ op: 'event', span, name: `tcab.${event.type}`, at, attributes: { 'tcab.message': clip(event.message) } });
        break;
      case 'warning':
        ops.push({ op: 'event', span, name: 'tcab.warning', at, attributes: defined({ 'tcab.message': clip(event.message), 'tcab.code': event.code }) });
        break;
      case 'error':
        // The conventions' exception event: backends show it as the span's error log.
        ops.push({ op: 'event', span, name: 'exception', at, attributes: { 'exception.type': event.code ?? 'error', 'exception.message': clip(event.message) } });
        break;
      case 'orchestration':
        this.subagent(event, parent!, at, ops);
        break;
      case 'unknown':
        break; // raw harness output: on the NATS stream, not in a trace
      default:
        if (TOOL_EVENT_TYPES.has(event.type)) this.tool(seq, event, parent!.span, at, ops);
    }
    if (parent) parent.last = Math.max(parent.last, at);
    return ops;
  }

  /**
   * Events that make no trace data of their own (left out over a budget, or raw output): the run and their session
   * were alive then (a new session id still opens its session span), and the session counts what it is missing.
   */
  leftOut(entry: LeftOut): SpanOperation[] {
    if (this.done) return [];
    const ops: SpanOperation[] = [];
    this.ensureRun(entry.at, ops);
    const session = this.sessionFor(entry.sessionId, entry.at, ops);
    session.last = Math.max(session.last, entry.at);
    session.toolsLeftOut += entry.tools;
    session.messagesLeftOut += entry.messages;
    return ops;
  }

  /** The run is over: usage and cost onto the sessions and the run, then every open span ends (children first). */
  result(result: RunResult): SpanOperation[] {
    if (this.done) return [];
    const finished = Date.parse(result.finished_at);
    const ops: SpanOperation[] = [];
    this.ensureRun(Date.parse(result.started_at), ops);
    const records = this.matchSessions(result.sessions);
    this.sessions.forEach((session, i) => {
      const mine = records[i]!;
      const tokens = mine.map((r) => r.tokens).filter((t): t is TokenUsage => t !== null);
      const reported = mine.map((r) => r.reported_cost_usd).filter((c): c is number => c !== null);
      ops.push({ op: 'set', span: session.span, attributes: { ...usageAttributes(tokens.length ? tokens.reduce(addTokens) : null), ...costAttributes({ reported: reported.length ? reported.reduce((a, b) => a + b, 0) : null }), ...defined({ 'tcab.session.exit_code': mine.at(-1)?.exit_code, 'tcab.session.count': mine.length > 1 ? mine.length : undefined }), ...leftOutAttributes(session) } });
      const failed = mine.find((r) => r.is_error === true || (r.exit_code !== null && r.exit_code !== 0) || r.signal !== null);
      this.endSubagentsOf(session, session.last, ops);
      this.end(session.span, session.last, ops, failed ? `session ${failed.index + 1} ${failed.signal ? `ended by ${failed.signal}` : failed.exit_code ? `exited with ${failed.exit_code}` : 'reported an error'}` : undefined);
    });
    ops.push({
      op: 'set',
      span: RUN_SPAN,
      attributes: {
        ...defined({ 'tcab.outcome': result.outcome, 'tcab.message': clip(result.message), 'tcab.harness.version': result.harness_version, 'tcab.canonical_model': result.canonical_model, 'tcab.auth_mode': result.auth_mode, 'tcab.event_count': result.event_count, 'tcab.catalog_version': result.catalog_version }),
        ...(result.session_ids.length ? { 'tcab.session_ids': result.session_ids.join(',') } : {}),
        ...usageAttributes(result.tokens),
        ...costAttributes({ reported: result.reported_cost_usd, actual: result.actual_cost_usd, comparable: result.comparable_cost_usd }),
        ...wireAttributes(result.wire),
        // The test case's verdict (issue 39), queryable beside the outcome.
        ...(result.check ? defined({ 'tcab.check.passed': result.check.passed, 'tcab.check.exit_code': result.check.exit_code, 'tcab.check.reward': result.check.reward, 'tcab.check.duration_ms': result.check.duration_ms }) : {}),
      },
    });
    this.finish(finished, result.outcome === 'succeeded' ? undefined : `${result.outcome}: ${clip(result.message)}`, ops);
    return ops;
  }

  /** No result will come (the driver is stopping without one): every open span ends now, the run as failed. */
  abandon(at: number, reason: string): SpanOperation[] {
    if (this.done) return [];
    const ops: SpanOperation[] = [];
    this.ensureRun(at, ops);
    for (const session of this.sessions) {
      const missing = leftOutAttributes(session);
      if (Object.keys(missing).length) ops.push({ op: 'set', span: session.span, attributes: missing });
      this.endSubagentsOf(session, session.last, ops);
      this.end(session.span, session.last, ops);
    }
    this.finish(at, reason, ops);
    return ops;
  }

  private finish(at: number, error: string | undefined, ops: SpanOperation[]): void {
    for (const span of [...this.open.keys()].filter((s) => s !== RUN_SPAN)) this.end(span, at, ops);
    this.end(RUN_SPAN, at, ops, error);
    this.done = true;
  }

  private ensureRun(at: number, ops: SpanOperation[]): void {
    if (this.open.has(RUN_SPAN) || this.done) return;
    const { runId, harness, model, startedAt } = this.identity;
    this.start(RUN_SPAN, null, `${OPERATION.workflow} tcab.run`, startedAt !== undefined && startedAt <= at ? startedAt : at, { [GEN_AI.operation]: OPERATION.workflow, [GEN_AI.workflowName]: 'tcab.run', [GEN_AI.agentName]: harness, [GEN_AI.requestModel]: model, 'tcab.run.id': runId, 'tcab.harness': harness }, ops);
  }

  private stage(event: EventOf<'system'>, at: number, ops: SpanOperation[]): void {
    // Sessions are over once teardown starts: a driver warning after it belongs to the run.
    if (event.stage === 'teardown') this.current = undefined;
    let span = this.stages.get(event.stage);
    this.stages.delete(event.stage);
    if (event.status === 'started' || span === undefined) {
      if (span) this.end(span, at, ops); // started again: the earlier run of it is over
      span = `stage:${event.stage}:${++this.spanCount}`;
      this.start(span, RUN_SPAN, `tcab.stage ${event.stage}`, at, { 'tcab.stage': event.stage }, ops);
      if (event.status === 'started') {
        this.stages.set(event.stage, span);
        return;
      }
    }
    // Completed or failed (a stage never seen starting gets a span without duration).
    ops.push({ op: 'set', span, attributes: { 'tcab.stage.message': clip(event.message) } });
    this.end(span, at, ops, event.status === 'failed' ? clip(event.message) : undefined);
  }

  /** The session an event belongs to: the current one, or a new one when none is open or its id changes. */
  private sessionFor(id: string | undefined, at: number, ops: SpanOperation[]): Session {
    const current = this.current;
    if (current && (id === undefined || current.id === id)) return current;
    if (current && current.id === null && id !== undefined) {
      current.id = id; // the harness told its id after its first lines
      ops.push({ op: 'set', span: current.span, attributes: { [GEN_AI.conversationId]: id } });
      return current;
    }
    const session: Session = { span: `session:${this.sessions.length + 1}`, id: id ?? null, last: at, toolsLeftOut: 0, messagesLeftOut: 0 };
    const { harness, model } = this.identity;
    this.start(session.span, RUN_SPAN, `${OPERATION.agent} ${harness}`, at, { [GEN_AI.operation]: OPERATION.agent, [GEN_AI.agentName]: harness, [GEN_AI.requestModel]: model, 'tcab.session.index': this.sessions.length, ...(id ? { [GEN_AI.conversationId]: id } : {}) }, ops);
    this.sessions.push(session);
    this.current = session;
    return session;
  }

  private tool(seq: number, event: ToolEvent, parent: string, at: number, ops: SpanOperation[]): void {
    const span = `${TOOL_SPAN_PREFIX}${seq}`;
    const name = event.tool_name ?? event.type;
    const specific: Record<string, string | number | undefined> =
      event.type === 'command'
        ? { 'tcab.command': clip(event.command), 'tcab.working_directory': event.working_directory, 'process.exit.code': event.exit_code }
        : event.type === 'search'
          ? { 'tcab.search.query': clip(event.query), 'file.path': event.path }
          : event.type === 'list'
            ? { 'file.path': event.path }
            : { 'file.path': event.path, 'tcab.start_line': event.start_line, 'tcab.end_line': event.end_line, ...(event.type === 'skill' ? { 'tcab.skill.name': event.skill_name } : {}) };
    const failed = event.is_success === false;
    this.start(span, parent, `${OPERATION.tool} ${name}`, at, defined({ [GEN_AI.operation]: OPERATION.tool, [GEN_AI.toolName]: name, [GEN_AI.toolType]: 'function', 'tcab.tool.kind': event.type, 'tcab.tool.success': event.is_success, ...specific, ...(failed ? { 'error.type': event.type === 'command' && event.exit_code !== undefined ? `exit_${event.exit_code}` : 'tool_failed' } : {}) }), ops);
    this.end(span, at, ops, failed ? `${event.type} failed` : undefined);
  }

  private subagent(event: EventOf<'orchestration'>, session: Session, at: number, ops: SpanOperation[]): void {
    const key = `${session.span}/${event.subagent_id ?? `name:${event.subagent_name ?? ''}`}`;
    let open = this.subagents.get(key);
    if (!open || event.action === 'subagent_started') {
      if (open) this.end(open.span, at, ops); // started again under the same id: the earlier one is over
      open = { span: `subagent:${++this.subagentCount}`, session };
      const name = event.subagent_name ?? 'subagent';
      this.start(open.span, session.span, `${OPERATION.agent} ${name}`, at, defined({ [GEN_AI.operation]: OPERATION.agent, [GEN_AI.agentName]: name, [GEN_AI.agentId]: event.subagent_id, 'tcab.subagent': true }), ops);
      this.subagents.set(key, open);
      if (event.action === 'subagent_started') return;
    }
    this.subagents.delete(key);
    this.end(open.span, at, ops, event.action === 'subagent_failed' || event.is_success === false ? 'subagent failed' : undefined);
  }

  private endSubagentsOf(session: Session, at: number, ops: SpanOperation[]): void {
    for (const [key, open] of this.subagents) {
      if (open.session !== session) continue;
      this.subagents.delete(key);
      this.end(open.span, at, ops);
    }
  }

  /** Result records per session span: by session id where the harness reported one, else by position. */
  private matchSessions(records: SessionRecord[]): SessionRecord[][] {
    const claimed = new Set<SessionRecord>();
    const out = this.sessions.map((s) => {
      const mine = s.id === null ? [] : records.filter((r) => r.session_id === s.id);
      mine.forEach((r) => claimed.add(r));
      return mine;
    });
    this.sessions.forEach((s, i) => {
      const record = records[i];
      if (s.id === null && record && !claimed.has(record) && record.session_id === null) out[i] = [record];
    });
    return out;
  }

  private start(span: string, parent: string | null, name: string, at: number, attributes: SpanAttributes, ops: SpanOperation[]): void {
    this.open.set(span, at);
    ops.push({ op: 'start', span, parent, name, at, attributes });
  }

  private end(span: string, at: number, ops: SpanOperation[], error?: string): void {
    const started = this.open.get(span);
    if (started === undefined) return;
    this.open.delete(span);
    ops.push({ op: 'end', span, at: Math.max(started, at), ...(error ? { error } : {}) });
  }
}

/** What a session span is missing because the sink left it out (absent when nothing was). */
function leftOutAttributes(session: Session): SpanAttributes {
  return defined({ 'tcab.trace.tool_spans_left_out': session.toolsLeftOut || undefined, 'tcab.trace.messages_left_out': session.messagesLeftOut || undefined });
}
