// A scripted model conversation for the stub model servers (offline demo, `tcab harnesses verify`, tests).
// Stateless step selection: the step that answers a request is the number of tool results already in the
// request's conversation, so retries and parallel requests of one session get consistent answers. Rules match
// the last user message first (e.g. a subagent's prompt), without consuming main steps.
import { z } from 'zod';

export const StubUsage = z.strictObject({
  input: z.int().nonnegative().describe('Uncached prompt tokens'),
  cache_read: z.int().nonnegative(),
  cache_write: z.int().nonnegative(),
  output: z.int().nonnegative().describe('All output tokens, reasoning included'),
  reasoning: z.int().nonnegative(),
});
export type StubUsage = z.infer<typeof StubUsage>;

export const StubStep = z.strictObject({
  thinking: z.string().optional(),
  text: z.string().optional(),
  tool: z
    .strictObject({
      name: z.string().min(1),
      args: z.record(z.string(), z.unknown()).default({}),
      /** A freeform ("custom") tool's raw input, e.g. Codex's apply_patch; Responses wire only. */
      input: z.string().optional(),
      id: z.string().optional(),
    })
    .optional(),
  usage: StubUsage.optional(),
  error: z.strictObject({ status: z.int().min(400).max(599), message: z.string(), type: z.string().optional(), retry_after_s: z.int().nonnegative().optional().describe('Sent as retry-after (a throttle with a back-off)') }).optional(),
});
export type StubStep = z.infer<typeof StubStep>;

export const StubScript = z.strictObject({
  steps: z.array(StubStep).min(1),
  rules: z.array(z.strictObject({ when_last_user_contains: z.string().min(1), step: StubStep })).default([]),
  usage: StubUsage.default({ input: 900, cache_read: 300, cache_write: 50, output: 80, reasoning: 12 }),
  models: z.array(z.string()).default(['mock-model']),
});
export type StubScript = z.infer<typeof StubScript>;
export type StubScriptInput = z.input<typeof StubScript>;
