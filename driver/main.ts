// `tcab-driver`: the driver Pod's entry point. Its settings are the driver env schema's (shared/driver-env.ts),
// decoded once here and passed down; the run spec comes from a file or the environment, NATS from the environment
// (nats/settings.ts). Every event goes to NATS and, as NDJSON, to stdout (the pod log); the driver's own log lines
// are pino JSON on stderr, bound to the run id and harness. Exit code = outcome. It holds no Kubernetes
// credentials and reads no Secret data it was not handed.
import { readFileSync } from 'node:fs';
import { runLifetimeSeconds } from '../shared/run.ts';
import type { RunSpec } from '../shared/run.ts';
import { InvalidInputError, UnknownHarnessError } from '../shared/errors.ts';
import { getHarness } from '../harnesses/registry.ts';
import { EXIT, exitCodeFor } from '../shared/exit-codes.ts';
import { executeRun } from './run.ts';
import { runUserFor } from './run-user.ts';
import { OUTCOME_EXIT } from '../shared/outcome-exit.ts';
import { TerminalSink } from './sinks/terminal.ts';
import { NatsSink } from './sinks/nats.ts';
import { OtelSink, describeOtelStats, otelExportEnabled, otelSecrets } from './sinks/otel.ts';
import { natsSecrets as secretsOf, natsSettingsFromEnv } from '../nats/settings.ts';
import type { EventSink } from './sinks/sink.ts';
import { newRunId } from './run-id.ts';
import { parseDriverEnv, parseDriverEnvFields, parseRunSpecText } from '../shared/driver-env.ts';
import type { DriverSettings } from '../shared/driver-env.ts';
import { createLogger } from '../shared/log.ts';
import type { Logger, LoggerOptions } from '../shared/log.ts';

/** The driver's own log lines (pino JSON on stderr: stdout is the event stream). Tests pass a destination. */
export type DriverLogOptions = Pick<LoggerOptions, 'destination'>;

/** The spec the environment names: TCAB_RUN_SPEC, or the file TCAB_RUN_SPEC_FILE holds (the schema saw one is set). */
export function specFromSettings(settings: Pick<DriverSettings, 'TCAB_RUN_SPEC' | 'TCAB_RUN_SPEC_FILE'>): RunSpec {
  const spec = settings.TCAB_RUN_SPEC ?? parseRunSpecText(readSpecFile(settings.TCAB_RUN_SPEC_FILE!), 'TCAB_RUN_SPEC_FILE');
  checkHarnessExists(spec.harness);
  return spec;
}

/** The npm registry's credential, from a file only the driver (root in a Pod) can read; a line of text. */
function readNpmAuth(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch (cause) {
    throw new InvalidInputError('TCAB_NPM_AUTH_FILE', `cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}

function readSpecFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new InvalidInputError('TCAB_RUN_SPEC_FILE', `cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}

/** An unknown harness is an invalid spec (exit 2), found before anything is installed or any credential read. */
export function checkHarnessExists(slug: string, root?: string): void {
  try {
    getHarness(slug, root);
  } catch (error) {
    if (error instanceof UnknownHarnessError) throw new InvalidInputError('run spec', `harness: "${slug}" is not a harness (known: ${error.known.join(', ')})`, { cause: error });
    throw error;
  }
}

/** `{ runId }` when TCAB_RUN_ID alone is set and valid: a line about another bad setting still says whose it is. */
function runIdIfValid(env: NodeJS.ProcessEnv): Record<string, string> {
  try {
    const { TCAB_RUN_ID } = parseDriverEnvFields(env, ['TCAB_RUN_ID']);
    return TCAB_RUN_ID === undefined ? {} : { runId: TCAB_RUN_ID };
  } catch {
    return {};
  }
}

/** The settings and spec, or a usage error logged (naming the variable or spec field) and exit 2. */
function readSetup(env: NodeJS.ProcessEnv, log: DriverLogOptions): { settings: DriverSettings; spec: RunSpec; logger: Logger } | number {
  let settings: DriverSettings;
  try {
    settings = parseDriverEnv(env);
  } catch (error) {
    // The level may be what failed to parse, so this line uses the default; the run id is bound if it was valid.
    createLogger({ component: 'tcab-driver', bindings: runIdIfValid(env), ...log }).error({ variable: (error as InvalidInputError).field }, (error as Error).message);
    return EXIT.usage;
  }
  // Set (even empty) means the caller chose it (the schema checked its grammar); unset means a fresh one.
  const runId = settings.TCAB_RUN_ID ?? newRunId();
  const bound = (harness?: string) => createLogger({ component: 'tcab-driver', level: settings.TCAB_LOG_LEVEL, bindings: { runId, ...(harness ? { harness } : {}) }, ...log });
  try {
    const spec = specFromSettings(settings);
    return { settings: { ...settings, TCAB_RUN_ID: runId }, spec, logger: bound(spec.harness) };
  } catch (error) {
    bound().error({ variable: (error as InvalidInputError).field }, (error as Error).message);
    return EXIT.usage;
  }
}

export async function driverMain(env: NodeJS.ProcessEnv = process.env, log: DriverLogOptions = {}): Promise<number> {
  const setup = readSetup(env, log);
  if (typeof setup === 'number') return setup;
  try {
    return await runDriver(env, setup);
  } catch (error) {
    // A bad NATS setting (exit 2 naming it) or a driver fault: logged as this run's, never exit 1 (harness failed).
    const fields = error instanceof InvalidInputError ? { variable: error.field } : { err: error };
    setup.logger.error(fields, (error as Error).message);
    return exitCodeFor(error);
  }
}

async function runDriver(env: NodeJS.ProcessEnv, { settings, spec, logger }: { settings: DriverSettings; spec: RunSpec; logger: Logger }): Promise<number> {
  const runId = settings.TCAB_RUN_ID!;
  // Which attempt of a cluster Run this is, of how many (the dispatcher's TCAB_RUN_ATTEMPT_NUMBER, TCAB_RUN_ATTEMPTS):
  // in the result and on every span. Unset (a workstation run, or a Pod from before attempts): not said anywhere.
  const attemptNumber = settings.TCAB_RUN_ATTEMPT_NUMBER !== undefined ? { number: settings.TCAB_RUN_ATTEMPT_NUMBER, of: Math.max(settings.TCAB_RUN_ATTEMPT_NUMBER, settings.TCAB_RUN_ATTEMPTS ?? 1) } : undefined;
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  const sinks: EventSink[] = [new TerminalSink(process.stdout, { format: 'json', resultFile: settings.TCAB_RESULT_FILE })];
  // TCAB_NATS_* (nats/settings.ts); unset TCAB_NATS_URL: no NATS. A bad value is exit 2 naming the variable.
  const nats = natsSettingsFromEnv(env);
  // Credentials may also sit in the URL (nats://user:password@host): they are scrubbed like the others.
  const natsSecrets = nats ? secretsOf(nats) : [];
  if (nats) {
    sinks.push(
      new NatsSink({
        settings: nats,
        deliverBy: Date.now() + runLifetimeSeconds(spec) * 1000,
        // Set by the dispatcher in driver Pods (the Run's uid): a re-created Run of the same name is another attempt.
        attempt: settings.TCAB_RUN_ATTEMPT,
        attemptNumber: settings.TCAB_RUN_ATTEMPT_NUMBER,
        // Set by the dispatcher in driver Pods: its pull_image/start_container events go first on the stream.
        awaitPodStartMs: settings.TCAB_AWAIT_POD_START_SECONDS * 1000 || undefined,
        warn: (message) => logger.warn(message),
        // SIGTERM: what NATS cannot take within a few seconds goes to the pod log before the Pod is killed.
        signal: abort.signal,
      }),
    );
  }
  // OpenTelemetry (TCAB_OTEL or OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, driver/sinks/otel.ts): spans beside the events.
  if (otelExportEnabled(env)) {
    sinks.push(new OtelSink({ runId, harness: spec.harness, model: spec.model, ...(attemptNumber ? { attempt: attemptNumber } : {}), env, report: (otel) => (otel.dropped > 0 || otel.messagesLeftOut > 0 ? logger.warn({ otel }, describeOtelStats(otel)) : logger.info({ otel }, describeOtelStats(otel))) }));
  }
  const result = await executeRun(spec, {
    runId,
    env,
    sinks,
    settings,
    user: runUserFor(settings, process.getuid?.() ?? 1000),
    credentialSource: { kind: 'mounted', dir: settings.TCAB_CREDENTIALS_DIR },
    signal: abort.signal,
    secrets: [...natsSecrets, ...otelSecrets(env)],
    npmAuth: readNpmAuth(settings.TCAB_NPM_AUTH_FILE),
    // The model gateway runs in this process (root); its token names the Run's uid where the dispatcher gave it.
    attempt: settings.TCAB_RUN_ATTEMPT,
    ...(attemptNumber ? { attemptNumber } : {}),
    log: logger,
  });
  return OUTCOME_EXIT[result.outcome];
}

if (import.meta.main) {
  try {
    process.exitCode = await driverMain();
  } catch (error) {
    // Not expected (driverMain logs and maps its own errors): still never exit 1, which says the harness failed.
    createLogger({ component: 'tcab-driver' }).error({ err: error }, (error as Error).message);
    process.exitCode = exitCodeFor(error);
  }
}
