// The permission sets as tables (what each identity may and may not do, subject by subject) and, for run users, a
// property over the run id grammar: one run's permissions never admit another run's subjects or replies. The
// server-side proofs (that nats.js really uses these subjects, and the server refuses the rest) are in
// run-user.test.ts and reader-dispatcher.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HARNESS_EVENT_TYPES } from '../../shared/events.ts';
import { eventSubject, progressSubject, resultSubject } from '../envelope.ts';
import { RESULTS_CONSUMER } from '../result-consumer.ts';
import { READER_INBOX_PREFIX, dispatcherPermissions, permits, readerPermissions, runInboxPrefix, runUserPermissions, subjectMatches } from './permissions.ts';

describe('subjectMatches', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.b', 'a.b.c', false],
    ['a.b.c', 'a.b', false],
    ['*.b', 'x.b', true],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});

describe('run user', () => {
  const run = runUserPermissions('r1');
  it.each([
    ['tcab.run.r1.event.message', true],
    ['tcab.run.r1.result', true],
    ['tcab.progress.r1', true],
    ['tcab.progress.r2', false],
    ['tcab.progress.*', false],
    ['tcab.progress.r1.x', false],
    ['$JS.API.INFO', true],
    ['$JS.API.STREAM.INFO.TCAB_RUNS', true],
    ['$JS.API.DIRECT.GET.TCAB_RUNS', true],
    ['tcab.run.r2.result', false],
    ['tcab.run.r1-x.result', false],
    ['tcab.run.r.result', false],
    ['tcab.other', false],
    ['$JS.API.STREAM.INFO.OTHER', false],
    ['$JS.API.CONSUMER.CREATE.TCAB_RUNS.x', false],
    ['$JS.API.CONSUMER.CREATE.TCAB_RUNS', false],
    ['$JS.API.CONSUMER.DURABLE.CREATE.TCAB_RUNS.x', false],
    ['$JS.API.STREAM.PURGE.TCAB_RUNS', false],
    ['$JS.API.STREAM.UPDATE.TCAB_RUNS', false],
    ['$JS.API.STREAM.DELETE.TCAB_RUNS', false],
    [`$JS.ACK.TCAB_RUNS.${RESULTS_CONSUMER}.1.1.1.1.1`, false],
    ['$SYS.REQ.ACCOUNT.A.CLAIMS.UPDATE', false],
  ])('publish %s: %s', (subject, allowed) => {
    expect(permits(run.pub, subject)).toBe(allowed);
  });

  it.each([
    ['tcab.run.r1.event.system', true],
    ['_INBOX_r1.abc.1', true],
    ['_INBOX.abc.1', false],
    ['_INBOX_r2.abc.1', false],
    [`${READER_INBOX_PREFIX}.abc.1`, false],
    ['tcab.run.r2.event.system', false],
    ['tcab.run.r2.result', false],
  ])('subscribe %s: %s', (subject, allowed) => {
    expect(permits(run.sub, subject)).toBe(allowed);
  });

  it('refuses a run id outside the grammar (a wildcard would widen the permissions)', () => {
    for (const bad of ['*', '>', 'a.b', '', 'a b']) expect(() => runUserPermissions(bad)).toThrow(/not a run id/);
    expect(() => runInboxPrefix('*')).toThrow(/not a run id/);
  });
});

describe('reader', () => {
  const reader = readerPermissions();
  it.each([
    ['$JS.API.INFO', true],
    ['$JS.API.STREAM.INFO.TCAB_RUNS', true],
    ['$JS.API.DIRECT.GET.TCAB_RUNS', true],
    ['$JS.API.DIRECT.GET.TCAB_RUNS.tcab.run.r1.result', true],
    ['$JS.API.CONSUMER.CREATE.TCAB_RUNS.oc_x_1.tcab.run.r1.>', true],
    ['$JS.API.CONSUMER.CREATE.TCAB_RUNS', false],
    ['$JS.API.CONSUMER.CREATE.TCAB_RUNS.oc_x_1', false],
    ['$JS.API.CONSUMER.MSG.NEXT.TCAB_RUNS.oc_x_1', true],
    ['$JS.API.CONSUMER.INFO.TCAB_RUNS.oc_x_1', true],
    ['$JS.API.CONSUMER.DELETE.TCAB_RUNS.oc_x_1', true],
    ['tcab.run.r1.result', false],
    ['tcab.run.r1.event.message', false],
    [`$JS.API.CONSUMER.CREATE.TCAB_RUNS.${RESULTS_CONSUMER}`, false],
    [`$JS.API.CONSUMER.CREATE.TCAB_RUNS.${RESULTS_CONSUMER}.tcab.run.*.result`, false],
    [`$JS.API.CONSUMER.MSG.NEXT.TCAB_RUNS.${RESULTS_CONSUMER}`, false],
    [`$JS.API.CONSUMER.INFO.TCAB_RUNS.${RESULTS_CONSUMER}`, false],
    [`$JS.API.CONSUMER.DELETE.TCAB_RUNS.${RESULTS_CONSUMER}`, false],
    [`$JS.ACK.TCAB_RUNS.${RESULTS_CONSUMER}.1.5.5.0.0`, false],
    ['$JS.API.CONSUMER.DURABLE.CREATE.TCAB_RUNS.mine', false],
    ['$JS.API.STREAM.PURGE.TCAB_RUNS', false],
    ['$JS.API.STREAM.UPDATE.TCAB_RUNS', false],
    ['$JS.API.STREAM.DELETE.TCAB_RUNS', false],
    ['$JS.API.STREAM.CREATE.TCAB_RUNS', false],
    ['$JS.API.STREAM.MSG.DELETE.TCAB_RUNS', false],
  ])('publish %s: %s', (subject, allowed) => {
    expect(permits(reader.pub, subject)).toBe(allowed);
  });

  it.each([
    [`${READER_INBOX_PREFIX}.abc.1`, true],
    ['_INBOX.abc.1', false],
    ['_INBOX_r1.abc.1', false],
    ['tcab.run.r1.result', false],
  ])('subscribe %s: %s', (subject, allowed) => {
    expect(permits(reader.sub, subject)).toBe(allowed);
  });
});

describe('dispatcher', () => {
  it('may do anything in its account (no allow list, no deny list)', () => {
    const d = dispatcherPermissions();
    expect(d).toEqual({ pub: { allow: [], deny: [] }, sub: { allow: [], deny: [] } });
    expect(permits(d.pub, '$JS.API.STREAM.PURGE.TCAB_RUNS')).toBe(true);
  });
});

const runId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/);

describe("one run's permissions never reach another run", () => {
  it("no subject of run b (events, result, replies) is published or subscribed with run a's permissions", () => {
    fc.assert(
      fc.property(runId, runId, fc.constantFrom(...HARNESS_EVENT_TYPES), (a, b, type) => {
        fc.pre(a !== b);
        const { pub, sub } = runUserPermissions(a);
        const theirs = [eventSubject(b, type), resultSubject(b), progressSubject(b), `${runInboxPrefix(b)}.nuid.1`];
        for (const subject of theirs) {
          expect(permits(pub, subject)).toBe(false);
          expect(permits(sub, subject)).toBe(false);
        }
        // ...while its own are admitted (the property is not vacuous).
        expect(permits(pub, resultSubject(a))).toBe(true);
        expect(permits(sub, `${runInboxPrefix(a)}.nuid.1`)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('holds for ids that share a prefix, which a string prefix rule would confuse', () => {
    for (const [a, b] of [['r1', 'r1-x'], ['r1-x', 'r1'], ['a', 'a_'], ['run', 'run-1']] as const) {
      expect(permits(runUserPermissions(a).pub, resultSubject(b))).toBe(false);
      expect(permits(runUserPermissions(a).sub, `${runInboxPrefix(b)}.x`)).toBe(false);
    }
  });
});
