// A run id names one run everywhere at once: a directory under TCAB_RUN_ROOT/runs, a NATS subject token
// (`tcab.run.<id>.>`), a Nats-Msg-Id prefix and a header value. So it has one grammar, checked at every entry
// point (`tcab run --run-id`, TCAB_RUN_ID, `tcab events follow <id>`), and is never rewritten into something
// else: two different ids can never share a directory or a subject.
//
// Grammar: 1-200 characters of [A-Za-z0-9_-], starting with a letter or digit. That excludes '.', '..', '/',
// whitespace, '*' and '>' (NATS wildcards), and the empty string; 200 leaves room under the 255-byte file-name
// limit and keeps subjects short.
import { z } from 'zod';
import { InvalidInputError } from './errors.ts';

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;
export const RUN_ID_GRAMMAR = '1-200 characters of letters, digits, "-" and "_", starting with a letter or digit';

export const RunId = z.string().regex(RUN_ID_PATTERN, `a run id must be ${RUN_ID_GRAMMAR}`);
export type RunId = z.infer<typeof RunId>;

export function isRunId(value: string): boolean {
  return RUN_ID_PATTERN.test(value);
}

/** Returns the id unchanged, or throws an InvalidInputError naming where it came from (`--run-id`, `TCAB_RUN_ID`). */
export function parseRunId(value: string, field: string): RunId {
  const problem = runIdProblem(value);
  if (problem === undefined) return value;
  throw new InvalidInputError(field, problem);
}

/** What is wrong with a run id (undefined: nothing), worded for `<field>: <problem>` (schemas name the field). */
export function runIdProblem(value: string): string | undefined {
  return isRunId(value) ? undefined : `${shown(value)} is not a run id: a run id is ${RUN_ID_GRAMMAR}`;
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/**
 * A run attempt (a cluster Run's uid, set by the dispatcher as TCAB_RUN_ATTEMPT): it goes into every Nats-Msg-Id
 * header, so it follows the run id grammar (a Kubernetes uid does); anything else, a newline above all, is refused.
 */
export function parseRunAttempt(value: string, field: string): string {
  const problem = runAttemptProblem(value);
  if (problem === undefined) return value;
  throw new InvalidInputError(field, problem);
}

/** What is wrong with a run attempt (undefined: nothing), worded like runIdProblem. */
export function runAttemptProblem(value: string): string | undefined {
  return isRunId(value) ? undefined : `${shown(value)} is not a run attempt: an attempt is ${RUN_ID_GRAMMAR}`;
}

/**
 * The run id of a Run object. Kubernetes namespaces are DNS labels (no '.' or '_') and names are DNS subdomains
 * (no '_'), so `<namespace>_<name with '.' as '_'>` is injective: the first '_' ends the namespace, every later
 * one was a '.'. Returns undefined when the result breaks the grammar (a name too long); the caller rejects the Run.
 */
export function clusterRunIdOf(namespace: string, name: string): RunId | undefined {
  const id = `${namespace}_${name.replaceAll('.', '_')}`;
  return isRunId(id) ? id : undefined;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The Run a cluster run id names, back from clusterRunIdOf: the first '_' ends the namespace, every later one was
 * a '.' of the name. Undefined when the id cannot be a Run's (no '_', or a namespace or name Kubernetes refuses).
 */
export function clusterRunOf(runId: string): { namespace: string; name: string } | undefined {
  const cut = runId.indexOf('_');
  if (cut < 0) return undefined;
  const namespace = runId.slice(0, cut);
  const name = runId.slice(cut + 1).replaceAll('_', '.');
  const nameOk = name.length <= 253 && name.split('.').every((part) => DNS_LABEL.test(part));
  return DNS_LABEL.test(namespace) && nameOk ? { namespace, name } : undefined;
}
