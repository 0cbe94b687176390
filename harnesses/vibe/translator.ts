// Mistral Vibe `--output streaming` -> normalized events. Each line is one transcript entry (records.ts):
// - message: the user's is the prompt echo; an assistant's text -> agent (once its generation completed; one that
//   Vibe discarded is a warning), other content blocks -> unknown;
// - reasoning -> reasoning;
// - effect (a tool call): held while pending/running/blocked, reported once settled (map-vibe-tools.ts); an entry
//   printed again after it settled is a restatement; a call that never settled is reported without an outcome at
//   the end; a subagent's start is its spawn's effect, its end the export's subagents[].status;
// - notice: error -> error, warning -> warning, info (session title, agent change, hooks) folds; checkpoint:
//   a compaction -> warning; callback (a question for the user, which --auto-approve never asks) -> unknown.
// Usage, cost and the verdict are not on stdout: finish reads the export.json side file (usage.ts).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionReports, SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapVibeCall } from './map-vibe-tools.ts';
import type { VibeCall } from './map-vibe-tools.ts';
import { CheckpointEntry, EffectEntry, Entry, MessageEntry, NoticeEntry, OPEN_STATES, ReasoningEntry, SettledState, TextBlock } from './records.ts';
import { EXPORT_REPORT, subagentEnds, vibeExport } from './export.ts';

/** Info notices that carry nothing an event can say (vibe/app_server/models.py NoticeDetail kinds). */
const QUIET_NOTICES: ReadonlySet<string> = new Set(['session_title_updated', 'agent_changed', 'hook_run_started', 'hook_run_completed', 'hook_started', 'hook_completed', 'scheduled_loop_fired']);
/** How many settled effect ids are remembered to recognise a restatement (bounded memory). */
const REMEMBERED_SETTLED = 4096;

export class VibeTranslator extends StructuredTranslator {
  /** Effects seen but not settled yet, by entry id (the latest printing of each). */
  private readonly open = new Map<string, VibeCall>();
  private readonly settled = new Set<string>();
  /** The ids of the subagents the stream started (their ends come from the export). */
  private readonly started = new Set<string>();

  line(line: StdoutLine): DraftEvent[] {
    const parsed = Entry.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    const record = line.json as JsonObject;
    const entry = parsed.data;
    // The root session's id: every entry carries one; the first is the prompt's.
    if (this.session === undefined && entry.sessionId !== undefined) this.session = entry.sessionId;
    const completed = entry.generationStatus === 'completed';
    switch (entry.type) {
      case 'message':
        return this.message(record, line, completed);
      case 'reasoning': {
        const r = ReasoningEntry.safeParse(record);
        if (!r.success) return [unknownLine(line)];
        if (!completed) return [];
        const discarded = this.discarded(record);
        if (discarded) return [discarded];
        return r.data.text.length > 0 ? [{ type: 'reasoning', message: r.data.text }] : [];
      }
      case 'effect':
        return this.effect(entry.id, record, line);
      case 'notice': {
        const n = NoticeEntry.safeParse(record);
        if (!n.success) return [unknownLine(line)];
        if (n.data.level === 'error') return [{ type: 'error', message: n.data.message }];
        if (n.data.level === 'warning') return [{ type: 'warning', message: n.data.message, code: n.data.detail?.kind ?? 'notice' }];
        return n.data.detail !== undefined && QUIET_NOTICES.has(n.data.detail.kind) ? [] : [unknownLine(line)];
      }
      case 'checkpoint': {
        const c = CheckpointEntry.safeParse(record);
        if (c.success && c.data.kind === 'compaction') return [{ type: 'warning', message: `Vibe compacted the context: ${c.data.message ?? 'no message'}`, code: 'compaction' }];
        return [unknownLine(line)];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(reports?: SessionReports): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const call of this.open.values()) events.push(...this.noteStarts(mapVibeCall(call, undefined, this.cwd)));
    this.open.clear();
    const report = reports?.[EXPORT_REPORT];
    const exported = report === undefined ? undefined : vibeExport(report);
    if (exported === undefined) {
      // No export (Vibe killed before its exit wrote one): no usage, no verdict.
      this.result = { ...this.result, tokens: null, raw_usage: null, reported_cost_usd: null };
      return this.summary(events);
    }
    if (exported.kind === 'unreadable') {
      events.push(unknownValue(exported.raw));
      this.result = { ...this.result, tokens: null, raw_usage: null, reported_cost_usd: null };
      return this.summary(events);
    }
    const { usage, doc } = exported;
    if (usage.unreadable.length > 0) events.push(unreadableUsageWarning('vibe', 'export.json', usage.unreadable));
    events.push(...subagentEnds(doc, this.started), ...exported.events);
    if (doc.session_id) this.session = doc.session_id;
    this.result = {
      ...this.result,
      tokens: usage.tokens,
      raw_usage: usage.raw,
      reported_cost_usd: usage.reportedCost,
      ...(usage.model !== undefined ? { reported_model: usage.model } : {}),
      ...(exported.verdict !== undefined ? { is_error: exported.verdict } : {}),
      // No final_text: Vibe reports no answer apart from its messages, and a stream cut short cannot tell its last
      // message from the answer (the export's outcome is the session's, not the stream's).
    };
    return this.summary(events);
  }

  /** A warning for completed output Vibe discarded (and will generate again), else undefined. */
  private discarded(record: JsonObject): DraftEvent | undefined {
    const outcome = MessageEntry.shape.outcome.safeParse(record.outcome);
    if (!outcome.success || outcome.data?.type !== 'discarded') return undefined;
    return { type: 'warning', message: `Vibe discarded generated output (${outcome.data.cause ?? 'no cause given'})`, code: 'discarded_output' };
  }

  private message(record: JsonObject, line: StdoutLine, completed: boolean): DraftEvent[] {
    const m = MessageEntry.safeParse(record);
    if (!m.success) return [unknownLine(line)];
    if (m.data.role === 'user') return [];
    if (m.data.role !== 'assistant') return [unknownLine(line)];
    if (!completed) return [];
    const discarded = this.discarded(record);
    if (discarded) return [discarded];
    const out: DraftEvent[] = [];
    for (const block of m.data.content) {
      const t = TextBlock.safeParse(block);
      if (!t.success) out.push(unknownValue(block));
      else if (t.data.text.length > 0) out.push({ type: 'agent', message: t.data.text });
    }
    return out;
  }

  private effect(id: string, record: JsonObject, line: StdoutLine): DraftEvent[] {
    const e = EffectEntry.safeParse(record);
    if (!e.success) return [unknownLine(line)];
    if (this.settled.has(id)) return [];
    const call: VibeCall = { id, toolName: e.data.detail.toolName, kind: e.data.detail.kind, input: e.data.detail.input, detail: record.detail as JsonObject, record };
    if (OPEN_STATES.has(e.data.state.status)) {
      this.open.set(id, call);
      return [];
    }
    // The record's own state: the entry schema's copy holds only `status`.
    const state = SettledState.safeParse(record.state);
    if (!state.success) return [unknownLine(line)];
    this.open.delete(id);
    if (this.settled.size >= REMEMBERED_SETTLED) this.settled.delete(this.settled.values().next().value!);
    this.settled.add(id);
    return this.noteStarts(mapVibeCall(call, state.data, this.cwd));
  }

  private noteStarts(events: DraftEvent[]): DraftEvent[] {
    for (const e of events) if (e.type === 'orchestration' && e.action === 'subagent_started' && e.subagent_id !== undefined) this.started.add(e.subagent_id);
    return events;
  }
}
