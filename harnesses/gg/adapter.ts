// gg as the driver sees it: an invocation that runs gg's entry point on the driver's Node, and a translator for
// gg's native NDJSON events. Its manifest is the built-in descriptor (descriptor.ts).
import type { HarnessAdapter, SessionResult, SessionTranslator, StdoutLine } from '../../shared/adapter.ts';
import type { DraftEvent } from '../../shared/events.ts';
import { HarnessEvent } from '../../shared/events.ts';
import type { UsageShape } from '../../shared/usage.ts';
import { TokenUsage } from '../../shared/usage.ts';
import { obj, str } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { GG_MAIN } from './descriptor.ts';

export const GG_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc: 'AI SDK normalized usage summed per step: inputTokenDetails.noCacheTokens -> input, cacheReadTokens -> cache_read, cacheWriteTokens -> cache_write, outputTokens -> output, outputTokenDetails.reasoningTokens -> reasoning.',
};

class GgTranslator implements SessionTranslator {
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    const final = obj(record.gg_result);
    if (final) {
      const tokens = TokenUsage.safeParse(final.tokens);
      this.result = { ...this.result, tokens: tokens.success ? tokens.data : null, raw_usage: final.raw_usage ?? null, is_error: final.stop === 'error' || final.stop === 'runtime_budget' || final.stop === 'cancelled', final_text: str(final.final_text), reported_model: str(final.model_id) };
      return [];
    }
    // gg emits the event contract itself; the engine stamps the time it saw the line, like for any harness.
    const parsed = HarnessEvent.safeParse({ ...record, timestamp: new Date(0).toISOString() });
    if (!parsed.success || parsed.data.type === 'system') return [unknownLine(line)];
    const { timestamp: _t, session_id: _s, ...draft } = parsed.data as HarnessEvent & { session_id?: string };
    return [draft as DraftEvent];
  }

  sessionId(): string | undefined {
    return undefined; // gg has no resumable sessions to name
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    return { events: [], result: this.result };
  }
}

export function ggAdapter(): HarnessAdapter {
  return {
    slug: 'gg',
    usageShape: GG_USAGE_SHAPE,
    invocation: (request) => ({
      // argv[0] is replaced by the driver's Node; gg's entry point is the first argument.
      argv: ['gg', GG_MAIN, '--model', request.model, '--prompt', request.prompt],
      env: request.baseUrl ? { TCAB_GG_BASE_URL: request.baseUrl } : ({} as Record<string, string>),
      stdin: 'close',
      files: [],
    }),
    createTranslator: () => new GgTranslator(),
  };
}

/** The registry's entry point for every adapter; gg's needs nothing from its manifest. */
export default function createAdapter(): HarnessAdapter {
  return ggAdapter();
}
