import { describe, expect, it } from 'vitest';
import type { FeedItem } from '../../shared/console.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { SYSTEM_STAGES } from '../../shared/events.ts';
import { TIMELINE, stageTimeline } from './stages.ts';

const T0 = Date.parse('2026-12-05T12:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
let seq = 0;
const item = (event: HarnessEvent): FeedItem => ({ seq: ++seq, at: event.timestamp, event });
const sys = (s: number, stage: Extract<HarnessEvent, { type: 'system' }>['stage'], status: 'started' | 'completed' | 'failed', message = '') => item({ type: 'system', timestamp: at(s), stage, status, message });
const agent = (s: number) => item({ type: 'agent', timestamp: at(s), message: 'hi' });
const byStage = (spans: ReturnType<typeof stageTimeline>) => Object.fromEntries(spans.map((s) => [s.label, { state: s.state, durationMs: s.durationMs }]));

describe('stage timeline', () => {
  it('shows every system stage, in order, with the session before teardown', () => {
    expect(TIMELINE.map((s) => s.stage)).toEqual([...SYSTEM_STAGES.slice(0, -1), 'session', 'teardown']);
    expect(SYSTEM_STAGES.at(-1)).toBe('teardown');
  });

  it('a run mid-session: set-up stages completed with durations, ones passed over skipped, session running up to now, teardown pending', () => {
    const items = [sys(0, 'install_harness', 'started'), sys(20, 'install_harness', 'completed', 'claude 2.1.0'), sys(20, 'probe_harness', 'started'), sys(21.5, 'probe_harness', 'completed'), agent(23)];
    const spans = stageTimeline({ items, final: false, nowMs: T0 + 60_000 });
    expect(spans.map((s) => s.label)).toEqual(['pull', 'start', 'install', 'probe', 'init', 'session', 'teardown']);
    expect(byStage(spans)).toEqual({
      pull: { state: 'skipped', durationMs: undefined },
      start: { state: 'skipped', durationMs: undefined },
      install: { state: 'completed', durationMs: 20_000 },
      probe: { state: 'completed', durationMs: 1_500 },
      init: { state: 'skipped', durationMs: undefined },
      session: { state: 'running', durationMs: 38_500 },
      teardown: { state: 'pending', durationMs: undefined },
    });
    expect(spans[2]!.message).toBe('claude 2.1.0');
  });

  it('a finished run: the session spans to teardown, stages never seen are skipped, the driver measurement wins', () => {
    const items = [sys(0, 'install_harness', 'started'), sys(10, 'install_harness', 'completed'), sys(10, 'probe_harness', 'started'), sys(11, 'probe_harness', 'completed'), sys(11, 'init_test_case', 'started'), sys(12, 'init_test_case', 'completed'), agent(15), sys(100, 'teardown', 'started'), sys(101, 'teardown', 'completed')];
    const result = { outcome: 'succeeded', message: 'ok', stages: [{ stage: 'install_harness', status: 'completed', duration_ms: 9_876 }] } as unknown as RunResult;
    const spans = byStage(stageTimeline({ items, final: true, nowMs: T0 + 500_000, result }));
    expect(spans.pull).toEqual({ state: 'skipped', durationMs: undefined });
    expect(spans.install).toEqual({ state: 'completed', durationMs: 9_876 });
    expect(spans.session).toEqual({ state: 'completed', durationMs: 88_000 });
    expect(spans.teardown).toEqual({ state: 'completed', durationMs: 1_000 });
  });

  it('a failed install: the session is skipped; a stage left open when the run ended was interrupted', () => {
    const items = [sys(0, 'pull_image', 'started'), sys(5, 'pull_image', 'completed'), sys(5, 'install_harness', 'started'), sys(9, 'install_harness', 'failed', 'npm ERR! 404'), sys(9, 'teardown', 'started')];
    const spans = byStage(stageTimeline({ items, final: true, nowMs: T0 + 60_000 }));
    expect(spans.install).toEqual({ state: 'failed', durationMs: 4_000 });
    expect(spans.session!.state).toBe('skipped');
    expect(spans.teardown!.state).toBe('interrupted');
  });

  it('a harness failure marks the session failed with the result message', () => {
    const items = [sys(0, 'probe_harness', 'started'), sys(1, 'probe_harness', 'completed'), agent(2), sys(30, 'teardown', 'started'), sys(31, 'teardown', 'completed')];
    const result = { outcome: 'harness_failed', message: 'session 1 exited with 1', stages: [] } as unknown as RunResult;
    const session = stageTimeline({ items, final: true, nowMs: T0, result }).find((s) => s.stage === 'session')!;
    expect(session).toMatchObject({ state: 'failed', durationMs: 29_000, message: 'session 1 exited with 1' });
  });
});

describe('stage timeline while set-up runs', () => {
  it('stages after the running one stay pending', () => {
    const items = [sys(0, 'pull_image', 'started'), sys(3, 'pull_image', 'completed'), sys(3, 'start_container', 'started')];
    const spans = byStage(stageTimeline({ items, final: false, nowMs: T0 + 5_000 }));
    expect(spans.pull).toEqual({ state: 'completed', durationMs: 3_000 });
    expect(spans.start).toEqual({ state: 'running', durationMs: 2_000 });
    expect([spans.install!.state, spans.session!.state, spans.teardown!.state]).toEqual(['pending', 'pending', 'pending']);
  });
});

describe('stage timeline: the session waits for init', () => {
  it('is pending while the test case initialises after the probe, and starts when init completes', () => {
    const items = [sys(0, 'probe_harness', 'started'), sys(1, 'probe_harness', 'completed'), sys(1, 'init_test_case', 'started')];
    expect(stageTimeline({ items, final: false, nowMs: T0 + 4_000 }).find((s) => s.stage === 'session')!.state).toBe('pending');
    const done = [...items, sys(6, 'init_test_case', 'completed')];
    expect(stageTimeline({ items: done, final: false, nowMs: T0 + 10_000 }).find((s) => s.stage === 'session')).toMatchObject({ state: 'running', durationMs: 4_000 });
  });
});
