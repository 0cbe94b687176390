// OpenCode `run --format json` -> normalized events. Records: step_start, reasoning, text, tool_use, step_finish,
// error; the session id is on every record, and there is no terminal result (the run ends after a
// `step_finish` with reason "stop", or an `error` record and exit 1).
// Every record is read through a zod schema of the fields used here; one that fails it is `unknown`. Each
// tool_use record is a whole finished call, so none is held back: a repeated callID is reported again, never lost.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { incompleteUsageWarning, unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapToolPart } from './map-opencode-tools.ts';
import { addStep, emptyTotals, opencodeTokens } from './usage.ts';

// z.object: extra keys are accepted and left out of the parsed copy (cheaper than carrying them); what is passed
// on (a tool part, a step's tokens) is the raw value, so `unknown` events and raw usage keep every field.
const Envelope = z.object({ sessionID: z.string().min(1).optional() });
const WithPart = z.object({ part: z.object({}) });
const TextRecord = z.object({ part: z.object({ text: z.string() }) });
const StepFinish = z.object({ part: z.object({ tokens: z.object({}) }) });
const ErrorRecord = z.object({
  error: z.object({
    name: z.string().optional(),
    message: z.string().optional(),
    data: z.object({ message: z.string().optional(), statusCode: z.int().optional() }).optional(),
  }),
});

export class OpencodeTranslator extends StructuredTranslator {
  private readonly totals = emptyTotals();
  private readonly rawSteps: JsonObject[] = [];
  private failed = false;
  /**
   * Whether the session reached its end: a step the model finished other than by calling tools (OpenCode starts
   * another step after "tool-calls"), or an error record. Before that, the steps summed so far are not the
   * session's usage (a killed session also spent the tokens of the step it was in): unknown, never understated.
   */
  private ended = false;
  /** The current step's last text, and the final answer: the text of the step OpenCode finished with "stop". */
  private stepText: string | undefined;
  private finalText: string | undefined;

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    const envelope = Envelope.safeParse(record);
    if (!record || !envelope.success) return [unknownLine(line)];
    this.session = envelope.data.sessionID ?? this.session;
    switch (record.type) {
      case 'step_start':
        if (!WithPart.safeParse(record).success) return [unknownLine(line)];
        this.stepText = undefined;
        return []; // a worktree snapshot marker
      case 'text':
      case 'reasoning': {
        const parsed = TextRecord.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const text = parsed.data.part.text;
        if (record.type === 'text') this.stepText = text;
        return text.length > 0 ? [{ type: record.type === 'text' ? 'agent' : 'reasoning', message: text }] : [];
      }
      case 'tool_use': {
        const parsed = WithPart.safeParse(record);
        return parsed.success ? mapToolPart(record.part as JsonObject, this.cwd) : [unknownLine(line)];
      }
      case 'step_finish': {
        const parsed = StepFinish.safeParse(record);
        if (!parsed.success) {
          // A step's usage that cannot be read leaves the session's classes unknown, never a smaller sum.
          const part = obj(record.part);
          const unreadable = addStep(this.totals, part?.tokens, part?.cost);
          if (typeof part?.reason === 'string') this.ended = part.reason !== 'tool-calls';
          return [unknownLine(line), unreadableUsageWarning('opencode', 'step_finish.part.tokens', unreadable)];
        }
        const { tokens, cost, reason } = record.part as JsonObject; // raw: kept whole in raw usage
        if (reason === 'stop') this.finalText = this.stepText;
        this.ended = typeof reason === 'string' && reason !== 'tool-calls';
        const unreadable = addStep(this.totals, tokens, cost);
        this.rawSteps.push({ tokens, cost, reason });
        return unreadable.length > 0 ? [unreadableUsageWarning('opencode', 'step_finish.part.tokens', unreadable)] : [];
      }
      case 'error': {
        const parsed = ErrorRecord.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const { error } = parsed.data;
        const message = error.data?.message ?? error.message ?? error.name;
        if (!message) return [unknownLine(line)];
        this.failed = true;
        this.ended = true;
        const status = error.data?.statusCode;
        return [compact({ type: 'error', message, code: status !== undefined ? `http_${status}` : error.name })];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const steps = this.totals.steps;
    const events: DraftEvent[] = steps > 0 && !this.ended ? [incompleteUsageWarning('opencode', `${steps} finished step(s)`)] : [];
    this.result = {
      tokens: steps > 0 && this.ended ? opencodeTokens(this.totals) : null,
      raw_usage: steps > 0 ? { steps: this.rawSteps, estimated_cost_usd: this.totals.cost } : null,
      reported_cost_usd: null,
      // OpenCode prints no verdict of its own: only an error record says how the session went.
      is_error: this.failed ? true : undefined,
      final_text: this.finalText,
    };
    return this.summary(events);
  }
}
