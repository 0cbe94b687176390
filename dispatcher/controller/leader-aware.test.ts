import { describe, expect, it } from 'vitest';
import { Leadership } from './leader-aware.ts';

describe('Leadership', () => {
  it('routes each key to the leader or follower reconcile as it is taken, and enqueues everything once per start of leading', async () => {
    let started = 0;
    const leadership = new Leadership(() => (started += 1));
    const seen: string[] = [];
    const reconcile = leadership.wrap(async (key) => void seen.push(`lead ${key}`), (key) => void seen.push(`follow ${key}`));
    await reconcile('a');
    leadership.set(true);
    leadership.set(true); // still leading: no second "enqueue everything"
    await reconcile('b');
    leadership.set(false);
    await reconcile('c');
    leadership.set(true);
    expect(seen).toEqual(['follow a', 'lead b', 'follow c']);
    expect(started).toBe(2);
    expect(leadership.isLeader).toBe(true);
  });
});
