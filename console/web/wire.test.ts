// The browser's copies of the shared lists and paths must equal the originals (they are copies only to keep zod
// out of the page's bundle).
import { describe, expect, it } from 'vitest';
import { CONSOLE_PATHS } from '../../shared/console.ts';
import { OUTCOMES } from '../../shared/run.ts';
import { FINAL_PHASES, RUN_PHASES } from '../../shared/run-status.ts';
import { FINAL, OUTCOME_LIST, PATHS, PHASES } from './wire.ts';

describe('console/web wire copies', () => {
  it('phases, final phases and outcomes equal the shared lists', () => {
    expect(PHASES).toEqual(RUN_PHASES);
    expect([...FINAL].sort()).toEqual([...FINAL_PHASES].sort());
    expect(OUTCOME_LIST).toEqual(OUTCOMES);
  });

  it('paths equal the shared ones, escaping included', () => {
    expect(PATHS.runsStream).toBe(CONSOLE_PATHS.runsStream);
    expect(PATHS.harnessesStream).toBe(CONSOLE_PATHS.harnessesStream);
    expect(PATHS.evaluationsStream).toBe(CONSOLE_PATHS.evaluationsStream);
    for (const [ns, name] of [['default', 'run-1'], ['a b', 'x/y?z']] as const) {
      expect(PATHS.runStream(ns, name)).toBe(CONSOLE_PATHS.runStream(ns, name));
      expect(PATHS.cancel(ns, name)).toBe(CONSOLE_PATHS.cancel(ns, name));
    }
    expect(PATHS.harnessConfig('claude code')).toBe(CONSOLE_PATHS.harnessConfig('claude code'));
    expect(PATHS.session).toBe(CONSOLE_PATHS.session);
    expect(PATHS.atif('a b', 'x/y')).toBe(CONSOLE_PATHS.atif('a b', 'x/y'));
  });
});
