// The run page's stage timeline, pure: pull, start, install, probe, init, session, teardown with their status and
// duration, derived from the run's `system` events (started/completed/failed) as they stream in. The session has no
// system event of its own: it spans from the end of probe (or of init, when the test case has one) to teardown's start.
import type { FeedItem } from '../../shared/console.ts';
import type { RunResult } from '../../shared/run.ts';
import type { SystemStage } from '../../shared/events.ts';
import { toMs } from './format.ts';

export type TimelineStage = SystemStage | 'session';
export type StageState = 'pending' | 'running' | 'completed' | 'failed' | 'interrupted' | 'skipped';

export interface StageSpan {
  stage: TimelineStage;
  label: string;
  state: StageState;
  startMs?: number;
  endMs?: number;
  durationMs?: number;
  /** The stage's last system message (what was pulled, which version was installed, why it failed). */
  message?: string;
}

export const TIMELINE: ReadonlyArray<{ stage: TimelineStage; label: string }> = [
  { stage: 'pull_image', label: 'pull' },
  { stage: 'start_container', label: 'start' },
  { stage: 'install_harness', label: 'install' },
  { stage: 'probe_harness', label: 'probe' },
  { stage: 'init_test_case', label: 'init' },
  { stage: 'session', label: 'session' },
  { stage: 'teardown', label: 'teardown' },
];

const SETUP: readonly TimelineStage[] = ['pull_image', 'start_container', 'install_harness', 'probe_harness', 'init_test_case'];
const FAILED_OUTCOMES = new Set(['harness_failed', 'timed_out', 'cancelled']);

export interface TimelineInput {
  items: readonly FeedItem[];
  /** The run reached a final phase: a stage still open was interrupted, one never seen was skipped. */
  final: boolean;
  nowMs: number;
  result?: RunResult;
}

export function stageTimeline({ items, final, nowMs, result }: TimelineInput): StageSpan[] {
  const spans = new Map<TimelineStage, StageSpan>(TIMELINE.map(({ stage, label }) => [stage, { stage, label, state: 'pending' }]));
  let lastEventMs: number | undefined;
  for (const { event } of items) {
    const at = toMs(event.timestamp);
    if (at !== undefined) lastEventMs = Math.max(lastEventMs ?? at, at);
    if (event.type !== 'system') continue;
    const span = spans.get(event.stage)!;
    span.message = event.message;
    if (event.status === 'started') {
      Object.assign(span, { state: 'running', startMs: at, endMs: undefined });
    } else {
      Object.assign(span, { state: event.status, endMs: at });
    }
  }

  const setupFailed = SETUP.some((s) => spans.get(s)!.state === 'failed');
  // Every run probes its harness right before the session; a test case's init, when there is one, comes between.
  const probe = spans.get('probe_harness')!;
  const init = spans.get('init_test_case')!;
  const setupEnd = init.state === 'completed' ? init.endMs : probe.state === 'completed' && init.state !== 'running' ? probe.endMs : undefined;
  const session = spans.get('session')!;
  const teardown = spans.get('teardown')!;
  if (!setupFailed && setupEnd !== undefined) {
    session.startMs = setupEnd;
    session.endMs = teardown.startMs ?? (final ? lastEventMs : undefined);
    session.state = session.endMs === undefined ? 'running' : result && FAILED_OUTCOMES.has(result.outcome) ? 'failed' : 'completed';
    if (session.state === 'failed' && result) session.message = result.message;
  }

  const recorded = new Map((result?.stages ?? []).map((s) => [s.stage, s.duration_ms]));
  const ordered = [...spans.values()];
  for (const [i, span] of ordered.entries()) {
    if (span.state === 'running' && final) span.state = 'interrupted';
    // A stage still pending when a later one has begun never ran (a built-in harness installs nothing).
    const passed = ordered.slice(i + 1).some((later) => later.state !== 'pending');
    if (span.state === 'pending' && (final || setupFailed || passed)) span.state = 'skipped';
    if (span.startMs !== undefined) {
      const end = span.endMs ?? (span.state === 'running' ? nowMs : undefined);
      if (end !== undefined) span.durationMs = Math.max(0, end - span.startMs);
    }
    // The driver's own measurement is exact where the events' clock stamps are coarse or missing.
    const exact = recorded.get(span.stage);
    if (exact !== undefined && span.state !== 'running') span.durationMs = exact;
  }
  return ordered;
}
