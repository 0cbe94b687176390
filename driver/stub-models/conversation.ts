// Wire-independent stub logic: which step answers a request, and per-call usage.
import type { StubScript, StubStep, StubUsage } from '../../shared/stub-script.ts';

/** What a wire adapter extracts from a request body. */
export interface ConversationView {
  toolResults: number;
  lastUserText: string;
}

export function selectStep(script: StubScript, view: ConversationView): StubStep {
  for (const rule of script.rules) if (view.lastUserText.includes(rule.when_last_user_contains)) return rule.step;
  return script.steps[view.toolResults] ?? { text: script.steps.at(-1)?.text ?? 'Done.' };
}

export function usageOf(script: StubScript, step: StubStep): StubUsage {
  return step.usage ?? script.usage;
}

/** Key-triggered failures (as the reference stub had): BAD400 -> 400, BADKEY -> 401. */
export function keyFailure(key: string | undefined): { status: number; message: string } | undefined {
  if (!key) return undefined;
  if (key.includes('BAD400')) return { status: 400, message: 'mock bad request' };
  if (key.includes('BADKEY')) return { status: 401, message: 'invalid x-api-key' };
  return undefined;
}

let counter = 0;
export function nextId(prefix: string): string {
  counter += 1;
  return `${prefix}${counter.toString(36)}`;
}
