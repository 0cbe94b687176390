import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HARNESS_EVENT_TYPES } from '../shared/events.ts';
import type { HarnessEvent } from '../shared/events.ts';
import type { RunResult } from '../shared/run.ts';
import { RUN_ID_PATTERN, clusterRunIdOf, clusterRunOf } from '../shared/run-id.ts';
import { InvalidInputError } from '../shared/errors.ts';
import {
  ALL_PROGRESS_SUBJECT, ALL_RESULTS_SUBJECT, ALL_RUNS_SUBJECT, attemptOfResultMsgId, progressSubject, runIdOfProgressSubject, clusterEventEnvelope, driverMsgId, eventEnvelope, eventSubject, eventTypeSubject, parseSubject, resultEnvelope, resultSubject, runSubjects, runToken,
} from './envelope.ts';

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

  it('attemptOfResultMsgId reads back the attempt driverMsgId put into a result id, and nothing from any other id', () => {
    fc.assert(
      fc.property(runId, fc.option(runId, { nil: undefined }), (id, attempt) => {
        expect(attemptOfResultMsgId(id, driverMsgId(id, attempt, 'result'))).toBe(attempt);
      }),
      { seed: 12, numRuns: 1000 },
    );
    expect(attemptOfResultMsgId('r', driverMsgId('r', 'uid-1', 7))).toBeUndefined(); // an event's id
    expect(attemptOfResultMsgId('r', driverMsgId('other', 'uid-1', 'result'))).toBeUndefined();
    expect(attemptOfResultMsgId('r', undefined)).toBeUndefined();
  });

  it('clusterRunOf gives back the namespace and name of every cluster run id, and nothing for an id no Run can have', () => {
    expect(clusterRunOf('evals_fix_bug_17')).toEqual({ namespace: 'evals', name: 'fix.bug.17' });
    fc.assert(
      fc.property(label, subdomain, (namespace, name) => {
        const id = clusterRunIdOf(namespace, name);
        if (id) expect(clusterRunOf(id)).toEqual({ namespace, name });
      }),
      { seed: 11, numRuns: 2000 },
    );
    // A workstation id, an upper-case namespace, an empty name part, a name label ending in '-'.
    for (const id of ['fix-tests', 'Evals_x', 'evals_', 'evals_a__b', 'evals_a-_b']) expect(clusterRunOf(id), id).toBeUndefined();
  });
});

// A run id of the grammar: a letter or digit, then up to 199 of [A-Za-z0-9_-].
const runId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/);
const eventType = fc.constantFrom(...HARNESS_EVENT_TYPES);

describe('subjects parse back to run id and kind', () => {
  it.each([
    ['tcab.run.run_1.event.agent', { runId: 'run_1', kind: 'event', type: 'agent' }],
    ['tcab.run.evals_fix_bug_17.event.system', { runId: 'evals_fix_bug_17', kind: 'event', type: 'system' }],
    ['tcab.run.x-y.result', { runId: 'x-y', kind: 'result' }],
    // not a subject the builders make: a dotted id, wildcards, an unknown type, the wrong root, extra tokens
    ['tcab.run.x.y.result', undefined],
    ['tcab.run.*.result', undefined],
    ['tcab.run.>', undefined],
    ['tcab.run.r.event.nonsense', undefined],
    ['tcab.run.r.event', undefined],
    ['tcab.run.r.result.extra', undefined],
    ['other.run.r.result', undefined],
    ['tcab.run.-r.result', undefined],
    ['tcab.run..result', undefined],
    [`tcab.run.${'a'.repeat(201)}.result`, undefined],
  ])('%s -> %j', (subject, parsed) => {
    expect(parseSubject(subject)).toEqual(parsed);
  });

  it('build then parse is the identity for every run id of the grammar and every event type', () => {
    fc.assert(
      fc.property(runId, eventType, (id, type) => {
        expect(parseSubject(eventSubject(id, type))).toEqual({ runId: id, kind: 'event', type });
        expect(parseSubject(resultSubject(id))).toEqual({ runId: id, kind: 'result' });
      }),
      { seed: 21, numRuns: 2000 },
    );
  });

  it('anything that is not a run id of the grammar is refused by the builders and never parses back from a subject', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 0, maxLength: 220 }), eventType, (id, type) => {
        fc.pre(!RUN_ID_PATTERN.test(id));
        expect(() => eventSubject(id, type)).toThrow(InvalidInputError);
        expect(parseSubject(`tcab.run.${id}.event.${type}`)).toBeUndefined();
        expect(parseSubject(`tcab.run.${id}.result`)).toBeUndefined();
      }),
      { seed: 21, numRuns: 2000 },
    );
  });

  it('a progress subject is outside the run stream and parses back to its run id; nothing else parses as one', () => {
    fc.assert(
      fc.property(runId, fc.string({ unit: 'binary', maxLength: 220 }), (id, other) => {
        const subject = progressSubject(id);
        expect(runIdOfProgressSubject(subject)).toBe(id);
        expect(subject.startsWith('tcab.run.')).toBe(false); // the stream takes tcab.run.>: never stored
        expect(parseSubject(subject)).toBeUndefined();
        if (!RUN_ID_PATTERN.test(other)) {
          expect(() => progressSubject(other)).toThrow(InvalidInputError);
          expect(runIdOfProgressSubject(`tcab.progress.${other}`)).toBeUndefined();
        }
        expect(runIdOfProgressSubject(`tcab.run.${id}.result`)).toBeUndefined();
      }),
      { seed: 21, numRuns: 2000 },
    );
    expect(ALL_PROGRESS_SUBJECT).toBe('tcab.progress.*');
    expect(runIdOfProgressSubject('tcab.progress.a.b')).toBeUndefined();
  });

  it('the wildcards cover the subjects they name', () => {
    expect(ALL_RUNS_SUBJECT).toBe('tcab.run.>');
    expect(ALL_RESULTS_SUBJECT).toBe('tcab.run.*.result');
    expect(eventTypeSubject('command')).toBe('tcab.run.*.event.command');
  });
});

const t = '2026-12-04T12:00:00.000Z';
const agent: HarnessEvent = { type: 'agent', timestamp: t, message: 'hi' };
const result = { run_id: 'run-1', event_count: 7, finished_at: t } as RunResult;

describe('envelopes: Nats-Msg-Id, Tcab-* and CloudEvents headers, one implementation', () => {
  it.each([
    ['a driver event', eventEnvelope('run-1', undefined, 3, agent), 'tcab.run.run-1.event.agent', 'run-1:3', '3', 'event', 'urn:tcab:driver', 'dev.tcab.harness.event.agent'],
    ['a driver event of an attempt', eventEnvelope('run-1', 'uid-2', 3, agent), 'tcab.run.run-1.event.agent', 'run-1:uid-2:3', '3', 'event', 'urn:tcab:driver', 'dev.tcab.harness.event.agent'],
    ['a result', resultEnvelope(result, 'uid-2'), 'tcab.run.run-1.result', 'run-1:uid-2:result', '8', 'result', 'urn:tcab:driver', 'dev.tcab.run.result'],
    [
      'a cluster event', clusterEventEnvelope('run-1', { type: 'system', timestamp: t, stage: 'start_container', status: 'completed', message: 'Container started' }),
      'tcab.run.run-1.event.system', `run-1:k8s:start_container:completed:${t}`, '0', 'event', 'urn:tcab:dispatcher', 'dev.tcab.harness.event.system',
    ],
  ] as const)('%s', (_, envelope, subject, msgId, seq, kind, source, ceType) => {
    expect(envelope).toEqual({
      subject,
      msgId,
      headers: {
        'Tcab-Run-Id': 'run-1', 'Tcab-Seq': seq, 'Tcab-Kind': kind,
        'ce-specversion': '1.0', 'ce-id': msgId, 'ce-source': source, 'ce-type': ceType, 'ce-subject': 'run-1', 'ce-time': t, 'content-type': 'application/json',
      },
    });
  });

  it('a cluster event of an attempt carries it (header and id): attempt 2\'s pull is attempt 2\'s, and the same kubelet event of two attempts in one second are two messages', () => {
    const pulled = { type: 'system', timestamp: t, stage: 'pull_image', status: 'completed', message: 'Pulled' } as const;
    const second = clusterEventEnvelope('run-1', pulled, 2);
    expect(second.headers['Tcab-Attempt']).toBe('2');
    expect(second.msgId).toBe(`run-1:k8s:a2:pull_image:completed:${t}`);
    expect(clusterEventEnvelope('run-1', pulled, 1).msgId).not.toBe(second.msgId);
    expect(clusterEventEnvelope('run-1', pulled).headers['Tcab-Attempt']).toBeUndefined();
  });

  it('header values never carry a line break (a header line could be forged): every part comes from the id grammar', () => {
    fc.assert(
      fc.property(runId, runId, fc.nat(), (id, attempt, seq) => {
        const { headers, msgId } = eventEnvelope(id, attempt, seq, agent);
        for (const value of [msgId, ...Object.values(headers)]) expect(value).not.toMatch(/[\r\n]/);
      }),
      { seed: 21, numRuns: 500 },
    );
  });
});
