// gg's agent loop: the model calls tools until it stops, the turn budget ends, or the runtime budget runs out.
// Events are emitted natively (agent, reasoning, tool operations with outcomes, errors); usage is summed per step
// from the AI SDK's normalized usage (noCache / cacheRead / cacheWrite input, output with a reasoning breakdown).
import { stepCountIs, streamText } from 'ai';
import type { LanguageModel, LanguageModelUsage } from 'ai';
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

export async function runAgent(options: AgentOptions): Promise<AgentResult> {
  const { emit } = options;
  let tokens: TokenUsage = { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  const raw: unknown[] = [];
  let text = '';
  let reasoning = '';
  let finalText = '';
  let steps = 0;
  let modelId: string | undefined;
  let stop: AgentResult['stop'] = 'completed';
  // One abort for the model stream and the running commands; its reason says which budget or signal ended it.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort('runtime_budget'), Math.max(0, options.deadline - Date.now()));
  const cancel = () => abort.abort('cancelled');
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener('abort', cancel, { once: true });
  const stopOnAbort = (): AgentResult['stop'] => (abort.signal.reason === 'cancelled' ? 'cancelled' : 'runtime_budget');
  const flushText = () => {
    if (text.trim()) emit({ type: 'agent', message: text });
    finalText = text || finalText;
    text = '';
  };
  const flushReasoning = () => {
    if (reasoning.trim()) emit({ type: 'reasoning', message: reasoning });
    reasoning = '';
  };
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
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          break;
        case 'text-end':
          flushText();
          break;
        case 'reasoning-delta':
          reasoning += part.text;
          break;
        case 'reasoning-end':
          flushReasoning();
          break;
        case 'tool-error':
          // The model's call could not run (invalid input, unknown tool): the loop goes on, the event says why.
          emit({ type: 'warning', message: `tool ${part.toolName} failed: ${String((part.error as Error)?.message ?? part.error)}`, code: 'tool_error' });
          break;
        case 'finish-step':
          steps += 1;
          tokens = addUsage(tokens, part.usage);
          raw.push(part.usage.raw ?? { inputTokens: part.usage.inputTokens, outputTokens: part.usage.outputTokens });
          modelId = part.response.modelId ?? modelId;
          if (steps >= options.maxTurns && part.finishReason === 'tool-calls') stop = 'turn_budget';
          break;
        case 'error': {
          const error = part.error as { statusCode?: number; message?: string };
          emit({ type: 'error', message: error?.message ?? String(part.error), ...(error?.statusCode ? { code: `http_${error.statusCode}` } : {}) });
          stop = 'error';
          break;
        }
        case 'abort':
          stop = stopOnAbort();
          break;
        default:
          break;
      }
    }
  } catch (error) {
    if (abort.signal.aborted) stop = stopOnAbort();
    else {
      emit({ type: 'error', message: (error as Error).message });
      stop = 'error';
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', cancel);
  }
  flushReasoning();
  flushText();
  if (stop === 'turn_budget') emit({ type: 'warning', message: `gg stopped at its turn budget of ${options.maxTurns} model calls`, code: 'turn_budget' });
  if (stop === 'runtime_budget') emit({ type: 'error', message: 'gg ran out of its runtime budget', code: 'runtime_budget' });
  return { tokens, raw_usage: raw, stop, final_text: finalText, model_id: modelId };
}
