// What each NATS identity may publish and subscribe, as pure functions (the JWT claims are built from these).
// Each JetStream API subject below is one nats.js really sends for what that identity does; the tests in
// permissions.server.test.ts prove each against a real nats-server (allowed works, the rest is refused).
//
// nats.js subjects used (from @nats-io/jetstream 3.x sources):
//   jetstreamManager(nc)          -> $JS.API.INFO (account info; its API check)
//   jsm.streams.info(s)           -> $JS.API.STREAM.INFO.<s>
//   jsm.direct.getMessage(s, {seq, next_by_subj}) -> $JS.API.DIRECT.GET.<s>  (last_by_subj: ...GET.<s>.<subject>)
//   js.publish(subj)              -> subj, reply on <inboxPrefix>.<nuid>.<token>; the ack comes to that inbox
//   ordered consumer create       -> one filter (a string, as reader.ts passes): $JS.API.CONSUMER.CREATE.<s>.<name>.<filter>
//                                    (name oc_<nuid>_<n>; the server requires the body's name to be the subject's).
//                                    A filter LIST goes to the bare $JS.API.CONSUMER.CREATE.<s> with the name only
//                                    in the body: a reader allowed that could name the dispatcher's results consumer
//                                    and turn it into an ephemeral one (proven against the server), so it is not allowed.
//   pull (consume)                -> $JS.API.CONSUMER.MSG.NEXT.<s>.<name>; messages and heartbeats to the inbox
//   ordered consumer reset/stop   -> $JS.API.CONSUMER.DELETE.<s>.<name>, $JS.API.CONSUMER.INFO.<s>.<name>
import { progressSubject, runSubjects } from '../envelope.ts';
import { STREAM_NAME } from '../stream.ts';
import { RESULTS_CONSUMER } from '../result-consumer.ts';

export interface SubjectPermission {
  allow: string[];
  deny: string[];
}

export interface UserPermissions {
  pub: SubjectPermission;
  sub: SubjectPermission;
}

/** A run user's inbox prefix: nats.js `inboxPrefix`, so the run may subscribe to its own replies only. */
export function runInboxPrefix(runId: string): string {
  // runSubjects checks the run id grammar; the prefix is then one subject token.
  runSubjects(runId);
  return `_INBOX_${runId}`;
}

/**
 * The reader's inbox prefix. Not of the form `_INBOX_<run id>` (a run id starts with a letter or digit, and this
 * does not start with `_INBOX_`), so no run user can subscribe to a reader's replies, nor a reader to a run's.
 */
export const READER_INBOX_PREFIX = '_TCAB_READER_INBOX';

const API = '$JS.API';

/**
 * The driver of one run: publish that run's subjects (events, result) through JetStream, and its progress subject
 * (core NATS, outside the stream: the check has started); read its Pod's start back
 * (direct get of the stored system events, a core subscription to the live ones); see its own replies.
 * Nothing else: no consumer, no stream change, no other run's subjects, no `tcab.run.>`.
 * One thing it could do beyond its run: a direct get by sequence (`{seq, next_by_subj}`, the form pod-start.ts
 * needs to read every stored system event in order) goes to the stream-wide `$JS.API.DIRECT.GET.TCAB_RUNS`, whose
 * body (not its subject) names the subject, so a holder of this credential could READ other runs' stored messages
 * that way; never write them. The credential is the driver's (root-owned 0400 file), never the harness's; only
 * the subject-scoped last-by-subject form could be confined to the run, and it cannot see an out-of-order relay.
 */
export function runUserPermissions(runId: string): UserPermissions {
  const own = runSubjects(runId);
  return {
    pub: { allow: [own, progressSubject(runId), `${API}.INFO`, `${API}.STREAM.INFO.${STREAM_NAME}`, `${API}.DIRECT.GET.${STREAM_NAME}`], deny: [] },
    sub: { allow: [own, `${runInboxPrefix(runId)}.>`], deny: [] },
  };
}

/**
 * A reader (`tcab events follow/tail`, console, exporters): ordered consumers on the run stream (one filter subject),
 * direct get, stream info, its own inbox. It publishes nothing to `tcab.>` and cannot create, update, read, pull,
 * ack or delete the dispatcher's results consumer. (It could make a consumer of its own durable: that costs the
 * server some storage, never the integrity of a run or a result.)
 */
export function readerPermissions(): UserPermissions {
  const consumer = (verb: string) => `${API}.CONSUMER.${verb}.${STREAM_NAME}`;
  const results = (verb: string) => `${consumer(verb)}.${RESULTS_CONSUMER}`;
  return {
    pub: {
      allow: [
        `${API}.INFO`,
        `${API}.STREAM.INFO.${STREAM_NAME}`,
        `${consumer('CREATE')}.*.>`,
        `${consumer('MSG.NEXT')}.*`,
        // Not on reader.ts's path, proven in reader-minimal.test.ts; kept for what readers also do: nats.js's ordered
        // consumer recovers with CONSUMER.INFO (missed heartbeats) and DELETE (reset), a console reads by direct get.
        `${consumer('INFO')}.*`,
        `${consumer('DELETE')}.*`,
        `${API}.DIRECT.GET.${STREAM_NAME}`,
        `${API}.DIRECT.GET.${STREAM_NAME}.>`,
      ],
      deny: [
        'tcab.>',
        `${results('CREATE')}.>`,
        results('MSG.NEXT'),
        results('INFO'),
        results('DELETE'),
        `$JS.ACK.${STREAM_NAME}.${RESULTS_CONSUMER}.>`,
      ],
    },
    sub: { allow: [`${READER_INBOX_PREFIX}.>`], deny: [] },
  };
}

/** The dispatcher: everything in the TCAB account (it owns the stream and the results consumer). */
export function dispatcherPermissions(): UserPermissions {
  return { pub: { allow: [], deny: [] }, sub: { allow: [], deny: [] } };
}

/**
 * Whether a NATS subject matches a permission pattern (`*` one token, `>` one or more trailing tokens). Pure; the
 * server's own rule, used by the property test that one run's permissions never reach another run's subjects.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Whether a permission (allow minus deny; empty allow = all) admits a subject. */
export function permits(permission: SubjectPermission, subject: string): boolean {
  const allowed = permission.allow.length === 0 || permission.allow.some((p) => subjectMatches(p, subject));
  return allowed && !permission.deny.some((p) => subjectMatches(p, subject));
}
