// The contract between a driver Pod and the driver: every environment variable `tcab-driver` reads, as one zod
// schema. The dispatcher writes a Pod's env by encoding typed values through it (dispatcher/pods/driver-pod.ts),
// the driver decodes it once at start (driver/main.ts) and passes the typed values down, and a workstation
// `tcab run` reads its settings through the same fields. Rename a variable here and both sides stop compiling.
// Each field is a codec (env text <-> typed value), so what the dispatcher writes parses back to what it meant.
// NATS settings (TCAB_NATS_*) are not here: they belong to the NATS module's own schema.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { RunSpec } from './run.ts';
import { runAttemptProblem, runIdProblem } from './run-id.ts';
import { LogLevel } from './log.ts';
import { InvalidInputError } from './errors.ts';
import { formatIssues } from './zod-issues.ts';

/** Where a driver Pod finds its harness's subscription files (the Secret's mount; keyed by basename). */
export const CREDENTIALS_MOUNT = '/var/run/tcab/credentials';
export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';
export const DEFAULT_RUN_ROOT = join(tmpdir(), 'tcab');

/** A file or directory name: any text a path can be (a NUL cannot be passed to the OS). */
const path = z.string().min(1).refine((v) => !v.includes('\0'), 'must not contain a NUL character (\\0)');
/** An endpoint; one that carries credentials (`user:pass@`) is not echoed into an error (errors are logged). */
const httpUrl = z.string().refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), {
  error: (issue) => `must be an http(s) URL, got ${String(issue.input).includes('@') ? 'a value with "@" (not shown: it may carry credentials)' : JSON.stringify(issue.input)}`,
});

/** An integer written as decimal digits (no sign, exponent or spaces: `Number()` would accept those). */
function integer(what: string, min: number) {
  return z.codec(
    z.string().regex(/^\d{1,9}$/, { error: (issue) => `must be ${what}, got ${JSON.stringify(issue.input)}` }),
    z.number().int().min(min, { error: (issue) => `must be ${what}, got "${String(issue.input)}"` }),
    { decode: (text) => Number(text), encode: (n) => String(n) },
  );
}

const runUserId = z.codec(
  z.string(),
  z.number().int().min(1, 'must be a positive integer uid/gid (not root)'),
  {
    decode: (text, ctx) => {
      const n = Number(text);
      if (/^\d+$/.test(text) && Number.isSafeInteger(n) && n >= 1) return n;
      ctx.issues.push({ code: 'custom', input: text, message: `must be a positive integer uid/gid (not root), got ${JSON.stringify(text)}` });
      return z.NEVER;
    },
    encode: (n) => String(n),
  },
);

/** A run spec as the JSON text a variable or file holds; the spec's own problems keep their field paths. */
export const RunSpecJson = z.codec(z.string(), RunSpec, {
  decode: (text, ctx) => {
    try {
      return JSON.parse(text) as unknown as z.input<typeof RunSpec>;
    } catch (cause) {
      ctx.issues.push({ code: 'custom', input: text, message: `not valid JSON: ${(cause as Error).message}` });
      return z.NEVER;
    }
  },
  encode: (spec) => JSON.stringify(spec),
});

const withProblem = (problem: (v: string) => string | undefined) => z.string().superRefine((v, ctx) => {
  const message = problem(v);
  if (message !== undefined) ctx.addIssue({ code: 'custom', input: v, message });
});

/** Every variable the driver reads, besides API keys and auth modes (resolved per harness by shared/auth.ts). */
export const DriverEnvFields = z.object({
  TCAB_RUN_ID: withProblem(runIdProblem).optional().describe('The run id (directories, NATS subjects). Unset: a fresh one. Set, even empty, it must follow the run id grammar.'),
  TCAB_RUN_ATTEMPT: withProblem(runAttemptProblem).optional().describe("Which attempt of the run id this is (a Run's uid): part of every NATS message id, so it follows the run id grammar."),
  TCAB_RUN_ATTEMPT_NUMBER: integer('a whole number from 1', 1).optional().describe('Which attempt of a cluster Run this is, from 1 (status.attempts): in every message header (Tcab-Attempt) and the result.'),
  TCAB_RUN_ATTEMPTS: integer('a whole number from 1', 1).optional().describe('How many attempts the Run may make (1 + spec.retries): with TCAB_RUN_ATTEMPT_NUMBER in the result, so a reader knows whether another may follow.'),
  TCAB_RUN_SPEC: RunSpecJson.optional().describe('The run spec as JSON (RunSpec). Either this or TCAB_RUN_SPEC_FILE.'),
  TCAB_RUN_SPEC_FILE: path.optional().describe('A file holding the run spec as JSON, instead of TCAB_RUN_SPEC.'),
  TCAB_CREDENTIALS_DIR: path.default(CREDENTIALS_MOUNT).describe("Where the harness's subscription files are mounted, keyed by basename."),
  TCAB_RUN_ROOT: path.default(DEFAULT_RUN_ROOT).describe("The parent of every run's directories (`<root>/runs/<run id>`) and the shared npm cache."),
  TCAB_AWAIT_POD_START_SECONDS: integer('a whole number of seconds', 0).default(0).describe("How long NATS messages wait for the dispatcher's start_container event of this Pod (0: not at all)."),
  TCAB_CA_BUNDLE: path.optional().describe('Where to write the system CAs plus NODE_EXTRA_CA_CERTS for non-Node tools (with NODE_EXTRA_CA_CERTS only).'),
  NODE_EXTRA_CA_CERTS: path.optional().describe("Extra CA certificates (PEM): Node reads them itself; the driver merges them into TCAB_CA_BUNDLE."),
  TCAB_RESULT_FILE: path.optional().describe('Write the run result here (pretty JSON) instead of as one JSON line on stderr.'),
  TCAB_NPM_REGISTRY: httpUrl.default(DEFAULT_NPM_REGISTRY).describe('The npm registry harnesses are installed from (a cluster-local cache in a cluster).'),
  TCAB_NPM_AUTH_FILE: path.optional().describe("A file holding the npm registry's credential (npm `_auth`: base64 of user:password), given to npm for the install stages only (a cluster's npm cache admits installs only)."),
  TCAB_NPM_CACHE: path.optional().describe('The npm cache directory; default `<TCAB_RUN_ROOT>/npm-cache[-<uid>]`, shared between runs.'),
  TCAB_RELEASE_STORE: z.union([z.literal('off'), path]).optional().describe("Where installed harness releases are kept between runs, each file checked against its SHA-256 when the next run takes it (driver/stages/release-store.ts); default `$XDG_CACHE_HOME/tcab/releases` or `$HOME/.cache/tcab/releases` (`<TCAB_RUN_ROOT>/releases` without a HOME); `off`: every run installs from the registry."),
  TCAB_PREFIX_ROOT: path.optional().describe("Where each run's install prefix is made (`<dir>/<expiry>.<uuid>`, removed at teardown; one a killed driver left is removed by a later driver once its run's maximum runtime has passed) instead of inside the run's root: a directory on the release store's mount, so that a root driver hard-links a stored release rather than copying it. Default: `<run root>/prefix`."),
  TCAB_BASE_URL: httpUrl.optional().describe("A model endpoint for every harness (an operator's gateway); TCAB_BASE_URL_<SLUG> wins for one."),
  TCAB_MODEL_CATALOG: path.optional().describe('A user copy of the model catalogue (prices); default: the bundled one.'),
  TCAB_RUN_UID: runUserId.optional().describe('The uid harnesses run as when the driver is root; default 1000.'),
  TCAB_RUN_GID: runUserId.optional().describe('The gid harnesses run as when the driver is root; default TCAB_RUN_UID.'),
  TCAB_OTEL: z.enum(['0', '1', 'true', 'false'], { error: (issue) => `must be 1, true, 0 or false, got ${JSON.stringify(issue.input)}` }).optional().describe('Export the run as OpenTelemetry spans over OTLP (1/true) or not (0/false); unset: when OTEL_EXPORTER_OTLP_ENDPOINT is set. The endpoint, headers and timeouts are the standard OTEL_* variables.'),
  TCAB_LOG_LEVEL: z.enum(LogLevel.options, { error: (issue) => `must be one of ${LogLevel.options.join(', ')}, got ${JSON.stringify(issue.input)}` }).default('info').describe("The level of the driver's own JSON log lines on stderr."),
});

/** The driver process's environment: as the fields, and a spec must come from somewhere. */
export const DriverEnv = DriverEnvFields.superRefine((env, ctx) => {
  if (env.TCAB_RUN_SPEC === undefined && env.TCAB_RUN_SPEC_FILE === undefined) {
    ctx.addIssue({ code: 'custom', path: ['TCAB_RUN_SPEC'], message: 'set TCAB_RUN_SPEC (JSON) or TCAB_RUN_SPEC_FILE' });
  }
  // Two specs is one too many: which one ran would depend on a precedence nobody reads.
  if (env.TCAB_RUN_SPEC !== undefined && env.TCAB_RUN_SPEC_FILE !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['TCAB_RUN_SPEC_FILE'], message: 'set TCAB_RUN_SPEC or TCAB_RUN_SPEC_FILE, not both' });
  }
});

/** The model endpoint of one harness: `TCAB_BASE_URL_<SLUG>` (upper case, `-` as `_`), beside the fields above. */
export const BASE_URL_VARIABLE = /^TCAB_BASE_URL_[A-Z0-9_]+$/;
export const BaseUrls = z.record(z.string().regex(BASE_URL_VARIABLE), httpUrl).describe('TCAB_BASE_URL_<SLUG>: the model endpoint of one harness, winning over TCAB_BASE_URL.');

export function baseUrlVariable(slug: string): string {
  return `TCAB_BASE_URL_${slug.toUpperCase().replace(/-/g, '_')}`;
}

export type DriverEnvFields = z.output<typeof DriverEnvFields>;
export type DriverSettings = DriverEnvFields & { baseUrls: z.output<typeof BaseUrls> };
/** What a writer of a driver's environment (the dispatcher's Pod builder) may set, typed as the driver reads it. */
export type DriverEnvValues = Partial<DriverEnvFields>;

/** The settings a run needs wherever it runs (a workstation's `tcab run` too); the rest are the Pod's. */
export const RUN_SETTINGS = ['TCAB_RUN_ROOT', 'TCAB_NPM_REGISTRY', 'TCAB_NPM_CACHE', 'TCAB_RELEASE_STORE', 'TCAB_PREFIX_ROOT', 'TCAB_BASE_URL', 'TCAB_MODEL_CATALOG'] as const;
export type RunSettings = Pick<DriverSettings, (typeof RUN_SETTINGS)[number] | 'baseUrls'>;

/**
 * The release store's directory, or undefined when it is off. By default the user's cache directory
 * (`$XDG_CACHE_HOME/tcab/releases`, else `$HOME/.cache/tcab/releases`: it outlives a reboot, as a workstation's
 * installed releases should), or `<TCAB_RUN_ROOT>/releases` when no HOME is known. A driver Pod is always told.
 */
export function releaseStoreOf(settings: Pick<DriverSettings, 'TCAB_RUN_ROOT' | 'TCAB_RELEASE_STORE'>, env: Env): string | undefined {
  if (settings.TCAB_RELEASE_STORE === 'off') return undefined;
  if (settings.TCAB_RELEASE_STORE) return settings.TCAB_RELEASE_STORE;
  const cache = env.XDG_CACHE_HOME?.startsWith('/') ? env.XDG_CACHE_HOME : env.HOME?.startsWith('/') ? join(env.HOME, '.cache') : undefined;
  return cache ? join(cache, 'tcab', 'releases') : join(settings.TCAB_RUN_ROOT, 'releases');
}

/** A harness's model endpoint override: its own variable, else the shared one. */
export function baseUrlFor(settings: RunSettings, slug: string): string | undefined {
  return settings.baseUrls[baseUrlVariable(slug)] ?? settings.TCAB_BASE_URL;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The schema's variables out of a whole environment. Empty counts as unset (a chart value left blank), except
 * TCAB_RUN_ID: an empty run id is a caller's choice, and a wrong one.
 */
function schemaInput(env: Env, keys: readonly string[]): { fields: Record<string, string>; baseUrls: Record<string, string> } {
  const fields: Record<string, string> = {};
  for (const key of keys) {
    const value = env[key];
    if (value !== undefined && (value !== '' || key === 'TCAB_RUN_ID')) fields[key] = value;
  }
  const baseUrls: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (BASE_URL_VARIABLE.test(key) && value) baseUrls[key] = value;
  return { fields, baseUrls };
}

const SPEC_VARIABLES: readonly PropertyKey[] = ['TCAB_RUN_SPEC', 'TCAB_RUN_SPEC_FILE'];

/**
 * One InvalidInputError naming the first bad variable (`field`), every problem in the message (`VAR: problem; ...`).
 * A spec that is JSON but not a valid RunSpec is named "run spec", with its own fields' paths, wherever it came from.
 */
export function driverEnvError(error: z.ZodError): InvalidInputError {
  const groups = new Map<string, z.core.$ZodIssue[]>();
  for (const issue of error.issues) {
    const [variable, ...rest] = issue.path;
    const inSpec = rest.length > 0 && SPEC_VARIABLES.includes(variable!);
    const field = inSpec ? 'run spec' : String(variable);
    groups.set(field, [...(groups.get(field) ?? []), { ...issue, path: inSpec ? rest : [] }]);
  }
  const text = (field: string, issues: z.core.$ZodIssue[]) => (field === 'run spec' ? formatIssues(new z.ZodError(issues)) : issues.map((i) => i.message).join('; '));
  const [first, ...others] = [...groups];
  const [field, issues] = first ?? ['driver environment', []];
  return new InvalidInputError(field, [text(field, issues), ...others.map(([f, list]) => `${f}: ${text(f, list)}`)].join('; '));
}

/** The driver's environment, decoded once at start; throws an InvalidInputError naming the bad variable(s). */
export function parseDriverEnv(env: Env): DriverSettings {
  const input = schemaInput(env, Object.keys(DriverEnvFields.shape));
  const fields = DriverEnv.safeParse(input.fields);
  if (!fields.success) throw driverEnvError(fields.error);
  return { ...fields.data, baseUrls: parseBaseUrls(input.baseUrls) };
}

/** Some of the fields alone (a preload, a workstation): the same decoding, nothing else required or checked. */
export function parseDriverEnvFields<K extends keyof DriverEnvFields>(env: Env, keys: readonly K[]): Pick<DriverEnvFields, K> {
  const mask = Object.fromEntries(keys.map((key) => [key, true])) as Record<keyof DriverEnvFields, true>;
  const parsed = DriverEnvFields.pick(mask).safeParse(schemaInput(env, keys).fields);
  if (!parsed.success) throw driverEnvError(parsed.error);
  return parsed.data as unknown as Pick<DriverEnvFields, K>;
}

/** The run settings alone (a workstation's `tcab run`: no spec, run id or Pod variables needed or checked). */
export function parseRunSettings(env: Env): RunSettings {
  return { ...parseDriverEnvFields(env, RUN_SETTINGS), baseUrls: parseBaseUrls(schemaInput(env, []).baseUrls) };
}

function parseBaseUrls(input: Record<string, string>): Record<string, string> {
  const parsed = BaseUrls.safeParse(input);
  if (!parsed.success) throw driverEnvError(parsed.error);
  return parsed.data;
}

/** A run spec read from a file (TCAB_RUN_SPEC_FILE): the same codec, its problems named as the variable's would be. */
export function parseRunSpecText(text: string, variable: 'TCAB_RUN_SPEC' | 'TCAB_RUN_SPEC_FILE'): RunSpec {
  const parsed = RunSpecJson.safeParse(text);
  if (!parsed.success) throw driverEnvError(new z.ZodError(parsed.error.issues.map((issue) => ({ ...issue, path: [variable, ...issue.path] }))));
  return parsed.data;
}

/**
 * The environment text for typed values (the writer's half of the contract): only the variables given, each
 * encoded as the driver decodes it, so the Pod's env parses back to the same values.
 */
export function encodeDriverEnv(values: DriverEnvValues, baseUrls: Readonly<Record<string, string>> = {}): Record<string, string> {
  const encoded = z.encode(DriverEnvFields.partial(), values) as Record<string, string | undefined>;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(encoded)) if (value !== undefined) out[name] = value;
  return { ...out, ...BaseUrls.parse(baseUrls) };
}
