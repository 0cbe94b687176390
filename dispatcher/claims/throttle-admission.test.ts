import { describe, expect, it } from 'vitest';
import { heldMessage, ThrottleAdmission } from './throttle-admission.ts';
import type { PendingRun } from './throttle-admission.ts';
import type { ThrottleHold } from './throttle.ts';
import { wireModelsOf } from './run-provider.ts';

const hold = (model: string | null, heldUntilMs: number, provider = 'anthropic'): ThrottleHold => ({ provider, model, heldUntilMs, level: 1, status: 429, retryAfterS: null, count: 1 });
const pending = (key: string, model: string, harness = 'claude'): PendingRun => ({ key, harness, model });
const anthropic = (run: PendingRun) => (run.harness === 'sub' ? undefined : { providers: ['anthropic'], models: wireModelsOf(run.model) });

describe('ThrottleAdmission', () => {
  it('holds the Runs of a held provider+model (either id), not others, and asks again at the earliest end', () => {
    const a = new ThrottleAdmission();
    const d = a.decide([pending('1', 'anthropic/claude-x'), pending('2', 'claude-y'), pending('3', 'claude-x'), pending('4', 'claude-x', 'sub')], [hold('claude-x', 9000), hold('claude-y', 4000, 'openai')], 1000, anthropic);
    expect([...d.held.keys()]).toEqual(['1', '3']);
    expect(d.requeueAfterMs).toBe(8000);
    expect(d.released).toEqual([]);
  });

  it('a hold on the whole provider holds every model of it', () => {
    const d = new ThrottleAdmission().decide([pending('1', 'claude-x'), pending('2', 'claude-y')], [hold(null, 5000)], 0, anthropic);
    expect([...d.held.keys()]).toEqual(['1', '2']);
  });

  it('releases once, measures time to resume from the first hold to the claim, forgets Runs that left the queue', () => {
    const a = new ThrottleAdmission();
    a.decide([pending('1', 'm'), pending('2', 'm'), pending('3', 'm')], [hold('m', 10_000)], 1000, anthropic);
    a.decide([pending('1', 'm'), pending('2', 'm'), pending('3', 'm')], [hold('m', 20_000)], 9000, anthropic);
    const released = a.decide([pending('1', 'm'), pending('2', 'm')], [], 21_000, anthropic); // 3 was deleted
    expect(released.released).toEqual(['1', '2']);
    expect(released.held.size).toBe(0);
    expect(a.decide([pending('1', 'm'), pending('2', 'm')], [], 22_000, anthropic).released).toEqual([]);
    expect(a.claimed(['1', 'x'], 23_000)).toEqual([22]);
    expect(a.size).toBe(1);
    a.decide([], [], 24_000, anthropic);
    expect(a.idle([])).toBe(true);
  });

  it('asks for each harness+model+auth mode once per pass, however many Runs share it', () => {
    let asked = 0;
    const runs = Array.from({ length: 500 }, (_, i) => pending(String(i), i % 2 ? 'a' : 'b'));
    new ThrottleAdmission().decide(runs, [hold('a', 5)], 0, (r) => (asked++, anthropic(r)));
    expect(asked).toBe(2);
  });

  it('the held message names the provider and the model, not the time (one status write per hold)', () => {
    expect(heldMessage(hold('claude-x', 1))).toBe(heldMessage(hold('claude-x', 999)));
    expect(heldMessage(hold(null, 1))).toContain('anthropic throttling every model (HTTP 429)');
  });
});
