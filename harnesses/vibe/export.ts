// The export.json Vibe writes into --output-dir on every exit (vibe/app_server/run_export.py RunExport), read at the
// session's end: its usage and cost (usage.ts), and Vibe's verdict. `outcome` is one of RunOutcome, each with its
// exit code: finished 0; usage_error, config_error 1; infrastructure_failure 2 (the model API after its retries, the
// runtime); turn_limit, token_limit, price_limit, deadline, terminated, length, refusal 3 (stopped without
// finishing); aborted 4. Only `finished` is a session that did what it was asked (is_error false); every other known
// outcome is is_error true, with Vibe's `error` as an error event, or, for a stop without one, a warning naming the
// outcome (the non-zero exit itself is the engine's terminal error). An outcome this version does not know leaves
// the verdict unset and comes out as `unknown`.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { compact } from '../../shared/translate/json.ts';
import { ExportDocument, OUTCOME_EXIT, vibeUsage } from './usage.ts';
import type { VibeUsage } from './usage.ts';

/** The side file's name: the key of finish's reports (Invocation.sideFiles). */
export const EXPORT_REPORT = 'export';

export type VibeExport =
  | { kind: 'read'; doc: ExportDocument; usage: VibeUsage; verdict: boolean | undefined; events: DraftEvent[] }
  /** Not JSON, or not an export: the text (or the parsed value) goes out as `unknown`. */
  | { kind: 'unreadable'; raw: unknown };

export function vibeExport(text: string): VibeExport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'unreadable', raw: text };
  }
  const parsed = ExportDocument.safeParse(value);
  if (!parsed.success) return { kind: 'unreadable', raw: value };
  const doc = parsed.data;
  const known = Object.hasOwn(OUTCOME_EXIT, doc.outcome);
  const events: DraftEvent[] = [];
  if (!known) {
    events.push({ type: 'unknown', raw: { outcome: doc.outcome, stop_reason: doc.stop_reason ?? null, error: doc.error ?? null } });
  } else if (doc.error) {
    events.push(compact({ type: 'error' as const, message: doc.error.message, code: doc.error.code ?? doc.outcome }));
  } else if (doc.outcome !== 'finished') {
    const why = doc.stop_reason ? ` (stop reason ${doc.stop_reason})` : '';
    events.push({ type: 'warning', message: `Vibe stopped before finishing: ${doc.outcome}${why}`, code: doc.outcome });
  }
  return { kind: 'read', doc, usage: vibeUsage(doc), verdict: known ? doc.outcome !== 'finished' : undefined, events };
}

const SubagentEnd = z.object({ session_id: z.string().min(1), agent_name: z.string().min(1).optional(), spawn_action_id: z.string().min(1).optional(), status: z.string() });

/**
 * How the subagents this session's stream started ended, from the export's `subagents[].status`
 * (RunSubagentStatus): idle or closed -> subagent_completed (its last turn ended; Vibe gives no verdict on its
 * work), failed -> subagent_failed; running, interrupted (stopped with the run) or unknown -> no end is claimed.
 * `started` holds the subagent ids of the subagent_started events: the child's session id, or the spawn's entry id
 * (`effect-<spawn action id>`) when the stream did not name the child.
 */
export function subagentEnds(doc: ExportDocument, started: ReadonlySet<string>): DraftEvent[] {
  const out: DraftEvent[] = [];
  for (const value of doc.subagents ?? []) {
    const sub = SubagentEnd.safeParse(value);
    if (!sub.success) continue;
    const byEntry = sub.data.spawn_action_id === undefined ? undefined : `effect-${sub.data.spawn_action_id}`;
    const id = started.has(sub.data.session_id) ? sub.data.session_id : byEntry !== undefined && started.has(byEntry) ? byEntry : undefined;
    if (id === undefined) continue;
    const name = sub.data.agent_name;
    if (sub.data.status === 'idle' || sub.data.status === 'closed') out.push(compact({ type: 'orchestration' as const, action: 'subagent_completed' as const, subagent_id: id, subagent_name: name }));
    else if (sub.data.status === 'failed') out.push(compact({ type: 'orchestration' as const, action: 'subagent_failed' as const, subagent_id: id, subagent_name: name, is_success: false }));
  }
  return out;
}
