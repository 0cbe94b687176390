import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventSubject, resultSubject, runSubjects, runToken } from './subjects.ts';
import { RUN_ID_PATTERN, clusterRunIdOf } from './run-id.ts';
import { InvalidInputError } from './errors.ts';

// Kubernetes namespaces are DNS labels; Run names are DNS subdomains (labels joined by '.').
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
const subdomain = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));

describe('run ids in subjects', () => {
  it('finding 10: ids that differ get different subjects; an id a subject cannot hold is refused, never rewritten', () => {
    expect(runSubjects('x-y')).toBe('tcab.run.x-y.>');
    expect(eventSubject('run_1', 'agent')).toBe('tcab.run.run_1.event.agent');
    expect(resultSubject('run_1')).toBe('tcab.run.run_1.result');
    // `x.y` and `x y` used to share the subject of `x_y`.
    for (const id of ['x.y', 'x y', 'x_y.', '*', '>', 'a.*', '', '..', '../x', 'x\ty']) {
      expect(() => runToken(id)).toThrow(InvalidInputError);
      expect(() => runSubjects(id)).toThrow(/is not a run id/);
    }
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }), (id) => {
        if (RUN_ID_PATTERN.test(id)) expect(runToken(id)).toBe(id);
        else expect(() => runToken(id)).toThrow(InvalidInputError);
      }),
      { seed: 10, numRuns: 2000 },
    );
  });

  it('clusterRunIdOf is injective over namespaces and names (`a-b/c` and `a/b-c` no longer collide) and stays in the grammar', () => {
    expect(clusterRunIdOf('a-b', 'c')).toBe('a-b_c');
    expect(clusterRunIdOf('a', 'b-c')).toBe('a_b-c');
    expect(clusterRunIdOf('evals', 'fix.bug.17')).toBe('evals_fix_bug_17');
    fc.assert(
      fc.property(label, subdomain, label, subdomain, (ns1, name1, ns2, name2) => {
        const a = clusterRunIdOf(ns1, name1);
        const b = clusterRunIdOf(ns2, name2);
        expect(a).toMatch(RUN_ID_PATTERN);
        expect(runToken(a!)).toBe(a);
        if (ns1 !== ns2 || name1 !== name2) expect(a).not.toBe(b);
      }),
      { seed: 10, numRuns: 2000 },
    );
    // Too long for the grammar: no id (the dispatcher refuses such a Run), never a truncated one that could collide.
    expect(clusterRunIdOf('evals', 'x'.repeat(200))).toBeUndefined();
  });
});
