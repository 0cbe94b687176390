// `tcab-driver`: the driver Pod's entry point. The run spec comes from a file or the environment, NATS from the
// environment; every event goes to NATS and, as NDJSON, to stdout (the pod log). Exit code = outcome. It holds
// no Kubernetes credentials and reads no Secret data it was not handed.
import { readFileSync } from 'node:fs';
import { RunSpec } from '../shared/run.ts';
import type { RunSpec as RunSpecType } from '../shared/run.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { listHarnesses } from '../harnesses/registry.ts';
import { formatIssues } from '../shared/zod-issues.ts';
import { EXIT, exitCodeFor } from '../shared/exit-codes.ts';
import { executeRun } from './run.ts';
import { resolveRunUser } from './run-user.ts';
import { OUTCOME_EXIT } from '../shared/outcome-exit.ts';
import { TerminalSink } from './sinks/terminal.ts';
import { NatsSink } from './sinks/nats.ts';
import { serverCredentials } from './sinks/nats-target.ts';
import type { EventSink } from './sinks/sink.ts';
import { newRunId } from './run-id.ts';
import { parseRunAttempt, parseRunId } from '../shared/run-id.ts';

export const DEFAULT_CREDENTIALS_DIR = '/var/run/tcab/credentials';

export function specFromEnvironment(env: Readonly<Record<string, string | undefined>>): RunSpecType {
  const file = env.TCAB_RUN_SPEC_FILE;
  const text = file ? readFileSync(file, 'utf8') : env.TCAB_RUN_SPEC;
  if (!text) throw new InvalidInputError('TCAB_RUN_SPEC', 'set TCAB_RUN_SPEC (JSON) or TCAB_RUN_SPEC_FILE');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new InvalidInputError(file ? 'TCAB_RUN_SPEC_FILE' : 'TCAB_RUN_SPEC', `not valid JSON: ${(cause as Error).message}`, { cause });
  }
  const parsed = RunSpec.safeParse(json);
  if (!parsed.success) throw new InvalidInputError('run spec', formatIssues(parsed.error));
  checkHarnessExists(parsed.data.harness);
  return parsed.data;
}

/** An unknown harness is an invalid spec (exit 2), found before anything is installed or any credential read. */
export function checkHarnessExists(slug: string, root?: string): void {
  const known = listHarnesses(root).map((h) => h.manifest.slug);
  if (!known.includes(slug)) throw new InvalidInputError('run spec', `harness: "${slug}" is not a harness (known: ${known.join(', ')})`);
}

export async function driverMain(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let spec: RunSpecType;
  try {
    spec = specFromEnvironment(env);
  } catch (error) {
    process.stderr.write(`tcab-driver: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  let runId: string;
  try {
    // Set (even empty) means the caller chose it: it must follow the grammar; unset means a fresh one.
    runId = env.TCAB_RUN_ID === undefined ? newRunId() : parseRunId(env.TCAB_RUN_ID, 'TCAB_RUN_ID');
    // Checked before anything runs, like the run id: it only matters once NATS is configured, but a bad one is a
    // bad setting either way.
    if (env.TCAB_RUN_ATTEMPT) parseRunAttempt(env.TCAB_RUN_ATTEMPT, 'TCAB_RUN_ATTEMPT');
  } catch (error) {
    process.stderr.write(`tcab-driver: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  const sinks: EventSink[] = [new TerminalSink(process.stdout, { format: 'json', resultFile: env.TCAB_RESULT_FILE || undefined })];
  // Credentials may also sit in the URL (nats://user:password@host): they are scrubbed like the others.
  const natsSecrets = [env.TCAB_NATS_PASSWORD, env.TCAB_NATS_TOKEN, ...serverCredentials(env.TCAB_NATS_URL?.split(',') ?? [])].filter((s): s is string => Boolean(s));
  if (env.TCAB_NATS_URL) {
    sinks.push(
      new NatsSink({
        servers: env.TCAB_NATS_URL.split(','),
        user: env.TCAB_NATS_USER || undefined,
        pass: env.TCAB_NATS_PASSWORD || undefined,
        token: env.TCAB_NATS_TOKEN || undefined,
        deliverBy: Date.now() + spec.maxRuntimeSeconds * 1000,
        // Set by the dispatcher in driver Pods (the Run's uid): a re-created Run of the same name is another attempt.
        attempt: env.TCAB_RUN_ATTEMPT || undefined, // checked by parseRunAttempt above
        // Set by the dispatcher in driver Pods: its pull_image/start_container events go first on the stream.
        awaitPodStartMs: Number(env.TCAB_AWAIT_POD_START_SECONDS || 0) * 1000 || undefined,
        warn: (message) => process.stderr.write(`tcab-driver: warning: ${message}\n`),
        // SIGTERM: what NATS cannot take within a few seconds goes to the pod log before the Pod is killed.
        signal: abort.signal,
      }),
    );
  }
  const result = await executeRun(spec, {
    runId,
    env,
    sinks,
    user: resolveRunUser(env, process.getuid?.() ?? 1000),
    credentialSource: { kind: 'mounted', dir: env.TCAB_CREDENTIALS_DIR || DEFAULT_CREDENTIALS_DIR },
    signal: abort.signal,
    secrets: natsSecrets,
  });
  return OUTCOME_EXIT[result.outcome];
}

if (import.meta.main) {
  try {
    process.exitCode = await driverMain();
  } catch (error) {
    // A setting that is wrong (TCAB_RUN_UID, ...) or a driver fault: never exit 1, which says the harness failed.
    process.stderr.write(`tcab-driver: ${(error as Error).message}\n`);
    process.exitCode = exitCodeFor(error);
  }
}
