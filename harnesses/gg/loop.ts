// gg's agent loop: the model calls tools until it stops, the turn budget ends, or the runtime budget runs out.
// Events are emitted natively (agent, reasoning, tool operations with outcomes, errors); usage is summed per step
// from the AI SDK's normalized usage (noCache / cacheRead / cacheWrite input, output with a reasoning breakdown).
import { stepCountIs, streamText } from 'ai';
import type { LanguageModel, LanguageModelUsage, TextStreamPart, ToolSet } from 'ai';
import type { DraftEvent } from '../../shared/events.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import { ggTools } from './tools.ts';

export const SYSTEM_PROMPT = [
  'You are gg, a coding agent working in a repository checked out in your current directory.',
  'Use the tools to inspect and change files and to run commands; prefer small, verifiable steps.',
  'When the task is done, reply with a short summary and stop calling tools.',
].join('\n');

export interface AgentOptions {
  model: LanguageModel;
  prompt: string;
  workdir: string;
  home: string;
  maxTurns: number;
  /** Absolute deadline (ms since epoch) for the whole session. */
  deadline: number;
  emit(event: DraftEvent): void;
  commandTimeoutMs?: number;
  /** Cancellation from outside (SIGTERM/SIGINT): ends the session like the runtime budget, as 'cancelled'. */
  signal?: AbortSignal;
}

export interface AgentResult {
  tokens: TokenUsage;
  raw_usage: unknown[];
  stop: 'completed' | 'turn_budget' | 'runtime_budget' | 'cancelled' | 'error';
  final_text: string;
  model_id?: string;
}

const n = (v: number | null | undefined) => v ?? 0;

export function addUsage(total: TokenUsage, u: LanguageModelUsage): TokenUsage {
  const cacheRead = n(u.inputTokenDetails?.cacheReadTokens);
  const cacheWrite = n(u.inputTokenDetails?.cacheWriteTokens);
  // noCacheTokens is the uncached part; providers that only report a total get the cached parts subtracted.
  const uncached = u.inputTokenDetails?.noCacheTokens ?? Math.max(0, n(u.inputTokens) - cacheRead - cacheWrite);
  return {
    input: n(total.input) + uncached,
    cache_read: n(total.cache_read) + cacheRead,
    cache_write: n(total.cache_write) + cacheWrite,
    output: n(total.output) + n(u.outputTokens),
    reasoning: n(total.reasoning) + n(u.outputTokenDetails?.reasoningTokens),
  };
}

/** One abort for the model stream and the running commands; its reason says which budget or signal ended it. */
function sessionAbort(deadline: number, signal: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort('runtime_budget'), Math.max(0, deadline - Date.now()));
  const cancel = () => abort.abort('cancelled');
  if (signal?.aborted) cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  const release = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
  };
  return { signal: abort.signal, release };
}

const stopOnAbort = (signal: AbortSignal): AgentResult['stop'] => (signal.reason === 'cancelled' ? 'cancelled' : 'runtime_budget');

type StreamPart = TextStreamPart<ToolSet>;

/**
 * What the stream has told so far: text and reasoning are gathered until their block ends (one event each), usage
 * is summed per step, and `stop` says how the session ended.
 */
class SessionTally {
  stop: AgentResult['stop'] = 'completed';
  private tokens: TokenUsage = { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  private readonly raw: unknown[] = [];
  private text = '';
  private reasoning = '';
  private finalText = '';
  private steps = 0;
  private modelId: string | undefined;
  private readonly emit: (event: DraftEvent) => void;
  private readonly maxTurns: number;

  constructor(emit: (event: DraftEvent) => void, maxTurns: number) {
    this.emit = emit;
    this.maxTurns = maxTurns;
  }

  /** One part of the model's stream; `abort` is the session's, whose reason names what ended it. */
  read(part: StreamPart, abort: AbortSignal): void {
    switch (part.type) {
      case 'text-delta':
        this.text += part.text;
        break;
      case 'text-end':
        this.flushText();
        break;
      case 'reasoning-delta':
        this.reasoning += part.text;
        break;
      case 'reasoning-end':
        this.flushReasoning();
        break;
      case 'tool-error':
        // The model's call could not run (invalid input, unknown tool): the loop goes on, the event says why.
        this.emit({ type: 'warning', message: `tool ${part.toolName} failed: ${String((part.error as Error)?.message ?? part.error)}`, code: 'tool_error' });
        break;
      case 'finish-step':
        this.finishStep(part);
        break;
      case 'error':
        this.modelError(part.error);
        break;
      case 'abort':
        this.stop = stopOnAbort(abort);
        break;
      default:
        break;
    }
  }

  /** The text and reasoning still open, then the event for a budget that ended the session; its result. */
  close(): AgentResult {
    this.flushReasoning();
    this.flushText();
    if (this.stop === 'turn_budget') this.emit({ type: 'warning', message: `gg stopped at its turn budget of ${this.maxTurns} model calls`, code: 'turn_budget' });
    if (this.stop === 'runtime_budget') this.emit({ type: 'error', message: 'gg ran out of its runtime budget', code: 'runtime_budget' });
    return { tokens: this.tokens, raw_usage: this.raw, stop: this.stop, final_text: this.finalText, model_id: this.modelId };
  }

  /** An error from the model (its HTTP status, when it has one, as the code) ends the session as 'error'. */
  private modelError(partError: unknown): void {
    const error = partError as { statusCode?: number; message?: string };
    this.emit({ type: 'error', message: error?.message ?? String(partError), ...(error?.statusCode ? { code: `http_${error.statusCode}` } : {}) });
    this.stop = 'error';
  }

  private finishStep(part: Extract<StreamPart, { type: 'finish-step' }>): void {
    this.steps += 1;
    this.tokens = addUsage(this.tokens, part.usage);
    this.raw.push(part.usage.raw ?? { inputTokens: part.usage.inputTokens, outputTokens: part.usage.outputTokens });
    this.modelId = part.response.modelId ?? this.modelId;
    if (this.steps >= this.maxTurns && part.finishReason === 'tool-calls') this.stop = 'turn_budget';
  }

  private flushText(): void {
    if (this.text.trim()) this.emit({ type: 'agent', message: this.text });
    this.finalText = this.text || this.finalText;
    this.text = '';
  }

  private flushReasoning(): void {
    if (this.reasoning.trim()) this.emit({ type: 'reasoning', message: this.reasoning });
    this.reasoning = '';
  }
}

export async function runAgent(options: AgentOptions): Promise<AgentResult> {
  const { emit } = options;
  const tally = new SessionTally(emit, options.maxTurns);
  const abort = sessionAbort(options.deadline, options.signal);
  try {
    const result = streamText({
      model: options.model,
      system: SYSTEM_PROMPT,
      prompt: options.prompt,
      tools: ggTools({ workdir: options.workdir, home: options.home, emit, commandTimeoutMs: options.commandTimeoutMs ?? 120_000, maxOutputChars: 30_000, signal: abort.signal }),
      stopWhen: stepCountIs(options.maxTurns),
      abortSignal: abort.signal,
      maxRetries: 2,
    });
    for await (const part of result.fullStream) tally.read(part, abort.signal);
  } catch (error) {
    if (abort.signal.aborted) tally.stop = stopOnAbort(abort.signal);
    else {
      emit({ type: 'error', message: (error as Error).message });
      tally.stop = 'error';
    }
  } finally {
    abort.release();
  }
  return tally.close();
}
