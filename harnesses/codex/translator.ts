// Codex `exec --json` -> normalized events (record types: shared/reference/harnesses.md section 2).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine } from '../../shared/adapter.ts';
import { compact, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { mapCompletedItem } from './map-codex-items.ts';
import { codexTokens } from './usage.ts';

export class CodexTranslator implements SessionTranslator {
  private session: string | undefined;
  /** Items started but not completed: flushed without an outcome if the session dies. */
  private readonly open = new Map<string, JsonObject>();
  private lastError: string | undefined;
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    switch (record.type) {
      case 'thread.started':
        this.session = str(record.thread_id) ?? this.session;
        return [];
      case 'turn.started':
        return [];
      case 'item.started':
      case 'item.updated': {
        // Progress only: the completed item carries the outcome, and one event per operation is emitted then.
        const item = obj(record.item);
        const id = str(item?.id);
        if (!item || !id) return [unknownLine(line)];
        this.open.set(id, item);
        return [];
      }
      case 'item.completed': {
        const item = obj(record.item);
        if (!item) return [unknownLine(line)];
        const id = str(item.id);
        if (id) this.open.delete(id);
        return mapCompletedItem(item);
      }
      case 'turn.completed': {
        const usage = obj(record.usage);
        if (!usage) return [unknownLine(line)];
        // Cumulative for the thread: the last report is the session's total (see usage.ts).
        this.result = { ...this.result, tokens: codexTokens(usage), raw_usage: usage, is_error: false };
        return [];
      }
      case 'turn.failed': {
        const message = str(obj(record.error)?.message);
        this.result = { ...this.result, is_error: true };
        if (message === undefined) return [unknownLine(line)];
        return message === this.lastError ? [] : [{ type: 'error', message }];
      }
      case 'error': {
        const message = str(record.message);
        if (message === undefined) return [unknownLine(line)];
        // "Reconnecting... n/5 (...)" are retries, not failures.
        if (/^Reconnecting\.\.\./.test(message)) return [{ type: 'warning', message }];
        this.lastError = message;
        return [{ type: 'error', message }];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const item of this.open.values()) {
      // An item that never completed (killed mid-command): reported without an outcome.
      const mapped = mapCompletedItem({ ...item, status: 'in_progress' });
      events.push(...mapped.map((e) => (e.type === 'command' || e.type === 'write' ? compact({ ...e, is_success: undefined }) : e)));
    }
    this.open.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }
}

