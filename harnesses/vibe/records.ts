// The Mistral Vibe `--output streaming` records and fields the translator reads, as zod schemas. Each line is one
// transcript entry (vibe/app_server/models.py PublicHistoryEntry, printed camelCase): `type` message, reasoning,
// effect (a tool call: `detail` what was asked, `state` how it went; both camelCase on the wire too: filePath, numLines), callback, checkpoint or notice, each with
// `id`, `sessionId`, `turnId`, `generationStatus` (in_progress | completed). A record that fails its schema becomes
// `unknown`, never a default; fields the translator does not read may hold anything (z.object ignores them).
import { z } from 'zod';

const id = z.string().min(1);

/** Every entry: an entry whose generation status is missing or new is not read as either. */
export const Entry = z.object({ type: z.string(), id, sessionId: id.optional(), generationStatus: z.enum(['in_progress', 'completed']) });

/** A message's content blocks: text is read, any other block (an image) is reported as it is. */
export const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
export const MessageEntry = z.object({
  role: z.string(),
  content: z.array(z.unknown()),
  /** Unset while generating; `discarded` (with a cause) for output Vibe did not keep. */
  outcome: z.object({ type: z.string(), cause: z.string().optional() }).nullable().optional(),
});

export const ReasoningEntry = z.object({ text: z.string() });

export const EffectEntry = z.object({
  title: z.string().optional(),
  detail: z.object({ toolName: z.string().min(1), kind: z.string(), input: z.unknown().optional() }),
  state: z.object({ status: z.string() }),
});

/** A settled effect's state: completed (display.success says whether the tool did what it was asked), failed, cancelled, skipped. */
export const SettledState = z.object({
  status: z.enum(['completed', 'failed', 'cancelled', 'skipped']),
  output: z.unknown().optional(),
  outputText: z.string().optional(),
  display: z.object({ success: z.boolean() }).nullable().optional(),
  error: z.object({ message: z.string(), code: z.string().nullable().optional() }).nullable().optional(),
  reason: z.string().nullable().optional(),
});
/** Effect states that are not settled yet: the call's outcome comes in a later record of the same id. */
export const OPEN_STATES: ReadonlySet<string> = new Set(['pending', 'running', 'blocked']);

export const NoticeEntry = z.object({ level: z.enum(['info', 'warning', 'error']), message: z.string(), detail: z.object({ kind: z.string() }).optional() });
export const CheckpointEntry = z.object({ kind: z.string(), message: z.string().nullable().optional() });
