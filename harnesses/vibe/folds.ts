// Mistral Vibe stream entries that yield no event of their own (shared/translate/folds.ts; checked by
// harnesses/translators.property.test.ts). An effect that is not settled yet needs none: its call comes out when
// it settles, or without an outcome at the end.
import type { RecordFold } from '../../shared/translate/folds.ts';

const QUIET_NOTICES = ['session_title_updated', 'agent_changed', 'hook_run_started', 'hook_run_completed', 'hook_started', 'hook_completed', 'scheduled_loop_fired'];

export const folds: readonly RecordFold[] = [
  { match: { type: 'message', role: 'user' }, kind: 'restated', why: 'the prompt echo (its sessionId names the session, as every entry does)' },
  { match: { type: ['message', 'reasoning'], generationStatus: 'in_progress' }, kind: 'silent', why: 'output still generating; the completed entry carries it whole' },
  { match: { type: 'message', role: 'assistant' }, when: (r) => Array.isArray(r.content) && r.content.every((b) => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'text' && (b as { text?: unknown }).text === ''), kind: 'silent', why: 'an assistant message with no text' },
  { match: { type: 'reasoning' }, when: (r) => r.text === '', kind: 'silent', why: 'empty reasoning' },
  { match: { type: 'effect', state: { status: ['completed', 'failed', 'cancelled', 'skipped'] } }, when: (r, s) => s.before.some((b) => isSettledEffect(b, r.id)), kind: 'restated', why: 'an effect printed again after it settled' },
  { match: { type: 'notice', level: 'info', detail: { kind: QUIET_NOTICES } }, kind: 'silent', why: 'session title, agent change, hook progress' },
];

function isSettledEffect(record: unknown, id: unknown): boolean {
  const r = record as { type?: unknown; id?: unknown; state?: { status?: unknown } } | null;
  return r !== null && typeof r === 'object' && r.type === 'effect' && r.id === id && ['completed', 'failed', 'cancelled', 'skipped'].includes(r.state?.status as string);
}
