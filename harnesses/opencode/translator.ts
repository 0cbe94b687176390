// OpenCode `run --format json` -> normalized events. Records: step_start, reasoning, text, tool_use, step_finish,
// error; the session id is on every record, and there is no terminal result (the run ends after a
// `step_finish` with reason "stop", or an `error` record and exit 1).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { compact, num, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { mapToolPart } from './map-opencode-tools.ts';
import { addStep, emptyTotals, opencodeTokens } from './usage.ts';

export class OpencodeTranslator implements SessionTranslator {
  private session: string | undefined;
  private readonly cwd: string | undefined;
  private readonly totals = emptyTotals();
  private readonly rawSteps: JsonObject[] = [];
  private failed = false;
  private lastText: string | undefined;

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    this.session = str(record.sessionID) ?? this.session;
    const part = obj(record.part);
    switch (record.type) {
      case 'step_start':
        return part ? [] : [unknownLine(line)]; // a worktree snapshot marker
      case 'text':
      case 'reasoning': {
        const text = str(part?.text);
        if (text === undefined) return [unknownLine(line)];
        if (record.type === 'text') this.lastText = text;
        return text.length > 0 ? [{ type: record.type === 'text' ? 'agent' : 'reasoning', message: text }] : [];
      }
      case 'tool_use':
        return part ? mapToolPart(part, this.cwd) : [unknownLine(line)];
      case 'step_finish':
        if (!part || !addStep(this.totals, part)) return [unknownLine(line)];
        this.rawSteps.push({ tokens: part.tokens, cost: part.cost, reason: part.reason });
        return [];
      case 'error': {
        const error = obj(record.error);
        const data = obj(error?.data);
        const message = str(data?.message) ?? str(error?.message) ?? str(error?.name);
        if (!message) return [unknownLine(line)];
        this.failed = true;
        const status = num(data?.statusCode);
        return [compact({ type: 'error', message, code: status !== undefined ? `http_${status}` : str(error?.name) })];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const result: SessionResult = {
      tokens: this.totals.steps > 0 ? opencodeTokens(this.totals) : null,
      raw_usage: this.totals.steps > 0 ? { steps: this.rawSteps, estimated_cost_usd: this.totals.cost } : null,
      reported_cost_usd: null,
      is_error: this.failed,
      final_text: this.lastText,
    };
    if (this.session) result.session_id = this.session;
    return { events: [], result };
  }
}
