// `tcab run`: one run in process on this machine, events printed live (the embedded default), optionally also
// published to NATS. The exit code tells succeeded / harness failed / infrastructure failed / timed out.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import type { Command } from 'commander';
import { Option } from 'commander';
import { RunSpec, runLifetimeSeconds } from '../../shared/run.ts';
import type { RunSpecInput } from '../../shared/run.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { getHarness, manifestForModel } from '../../harnesses/registry.ts';
import { executeRun } from '../../driver/run.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { newRunId } from '../../driver/run-id.ts';
import { parseRunId } from '../../shared/run-id.ts';
import { localTestCaseProblem } from '../../driver/test-case.ts';
import { OUTCOME_EXIT } from '../../shared/outcome-exit.ts';
import { EXIT } from '../../shared/exit-codes.ts';
import { TerminalSink } from '../../driver/sinks/terminal.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { OtelSink, describeOtelStats, otelExportEnabled, otelSecrets } from '../../driver/sinks/otel.ts';
import { natsSettingsFromEnv } from '../../nats/settings.ts';
import type { EventSink } from '../../driver/sinks/sink.ts';
import { startOfflineStub } from '../../driver/offline-stub.ts';
import type { OfflineStub } from '../../driver/offline-stub.ts';
import { defaultRunBase } from '../../driver/run-dirs.ts';
import { resolveFormat } from '../../shared/format/event-writer.ts';
import type { EventFormat } from '../../shared/format/event-writer.ts';
import { onBrokenPipe } from '../output/broken-pipe.ts';
import { AtifFileSink } from '../output/atif-file.ts';

interface RunOptions {
  harness: string;
  model: string;
  prompt?: string;
  promptFile?: string;
  testCase?: string;
  git?: string;
  ref?: string;
  init?: string;
  maxRuntime: string;
  sessions: string;
  authMode?: 'auto' | 'subscription' | 'api-key';
  protocol?: 'stdout' | 'acp';
  json?: boolean;
  pretty?: boolean;
  result?: string;
  nats?: string;
  runId?: string;
  keep?: boolean;
  stub?: boolean;
  fullReasoning?: boolean;
  atif?: string;
  otel?: boolean;
  /** commander's --no-gateway: false. */
  gateway?: boolean;
  maxTokens?: string;
  maxCost?: string;
  check?: string;
  checkTimeout?: string;
}

function readPromptFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new InvalidInputError('--prompt-file', `cannot read "${file}": ${(cause as Error).message}`, { cause });
  }
}

/** Flags -> RunSpec, validated by the shared schema so errors name the field. */
export function specFromFlags(options: RunOptions): RunSpecInput {
  if ((options.prompt === undefined) === (options.promptFile === undefined)) {
    throw new InvalidInputError('--prompt', 'give exactly one of --prompt or --prompt-file');
  }
  if (options.testCase && options.git) throw new InvalidInputError('--test-case', 'give either --test-case or --git, not both');
  const prompt = options.prompt ?? readPromptFile(options.promptFile!);
  const source = options.testCase ? { local: { path: options.testCase } } : options.git ? { git: { url: options.git, ...(options.ref ? { ref: options.ref } : {}) } } : undefined;
  const check = options.check === undefined ? undefined : { command: options.check, ...(options.checkTimeout === undefined ? {} : { timeoutSeconds: Number(options.checkTimeout) }) };
  if (options.checkTimeout !== undefined && !check) throw new InvalidInputError('--check-timeout', 'goes with --check');
  const testCase = source || options.init || check ? { ...(source ? { source } : {}), ...(options.init ? { init: options.init } : {}), ...(check ? { check } : {}) } : undefined;
  return {
    harness: options.harness,
    model: options.model,
    prompt,
    ...(testCase ? { testCase } : {}),
    maxRuntimeSeconds: Number(options.maxRuntime),
    sessions: Number(options.sessions),
    ...(options.authMode ? { authMode: options.authMode } : {}),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.maxTokens !== undefined || options.maxCost !== undefined
      ? { budget: { ...(options.maxTokens !== undefined ? { maxTokens: { total: Number(options.maxTokens) } } : {}), ...(options.maxCost !== undefined ? { maxCostUsd: Number(options.maxCost) } : {}) } }
      : {}),
  };
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run one harness session here, printing normalized events live')
    .requiredOption('--harness <slug>', 'harness to run (see `tcab harnesses list`)')
    .requiredOption('--model <id>', 'model id, passed to the harness unchanged')
    .option('--prompt <text>', 'the instruction for the harness')
    .option('--prompt-file <file>', 'read the prompt from a file')
    .option('--test-case <dir>', 'seed the workspace from this directory')
    .option('--git <url>', 'seed the workspace by cloning this repository')
    .option('--ref <ref>', 'branch, tag or commit for --git')
    .option('--init <command>', 'shell command run in the workspace before the session')
    .option('--check <command>', "shell command run in the workspace after the last session that judges the work: exit 0 = passed (the result's check)")
    .option('--check-timeout <seconds>', 'maximum runtime of the check (default: 600)')
    .option('--max-runtime <seconds>', 'maximum runtime of the whole run', '1800')
    .option('--sessions <n>', 'sessions to drive (later ones resume the first)', '1')
    .addOption(new Option('--auth-mode <mode>', 'lock the auth mode for this run').choices(['auto', 'subscription', 'api-key']))
    .addOption(new Option('--protocol <protocol>', "how the driver talks to the harness: its own stdout stream, or the Agent Client Protocol (harnesses whose manifest has [acp]); default: the manifest's").choices(['stdout', 'acp']))
    .option('--stub', 'run offline against the built-in stub model (no credentials needed)')
    .option('--max-tokens <n>', 'budget: most tokens the run may use (input + output + cache), measured by the model gateway')
    .option('--max-cost <usd>', "budget: most the run may cost in USD at the model catalogue's list prices")
    .option('--no-gateway', 'give the harness the API key itself, as before the model gateway (the agent can then read it; no wire usage, no budget)')
    .option('--nats <url>', 'also publish every event and the result to this NATS server')
    .option('--otel', 'also export the run as OpenTelemetry spans over OTLP (default when OTEL_EXPORTER_OTLP_ENDPOINT is set)')
    .option('--run-id <id>', 'run id: 1-200 of A-Z a-z 0-9 - _, starting with a letter or digit (default: generated)')
    .option('--keep', 'keep the run home, workspace and install prefix')
    .option('--result <file>', 'write the run result as JSON to this file')
    .option('--atif <file>', 'also write the run as an ATIF trajectory (Harbor\'s format) to this file')
    .option('--full-reasoning', 'show reasoning in full (human view)')
    .addOption(new Option('--json', 'NDJSON events (default when stdout is not a terminal)').conflicts('pretty'))
    .addOption(new Option('--pretty', 'human view (default on a terminal)'))
    .addHelpText(
      'after',
      `
Examples:
  tcab run --harness claude --model claude-sonnet-4-5 --stub --prompt 'Create hello.txt'
  ANTHROPIC_API_KEY=... tcab run --harness claude --model claude-sonnet-4-5 --prompt 'Fix the failing test' --test-case ./repo
  tcab run --harness codex --model gpt-5-codex --prompt-file task.md --git https://github.com/org/repo --nats nats://127.0.0.1:4222
  tcab run --harness gg --model stub --stub --prompt 'Create hello.txt' --check 'grep -q hello hello.txt'

Exit status: 0 succeeded, 1 harness failed, 2 invalid flags or run spec (e.g. unknown harness, a NUL in the prompt),
3 infrastructure failed (auth, install, probe, init), 4 timed out, 6 budget reached, 7 succeeded but the check
failed, 130 cancelled.`,
    )
    .action(runHere);
}

async function runHere(options: RunOptions): Promise<void> {
  const parsed = RunSpec.safeParse(specFromFlags(options));
  if (!parsed.success) throw new InvalidInputError('run spec', formatIssues(parsed.error));
  const spec = parsed.data;
  const manifest = manifestForModel(getHarness(spec.harness), spec.model);
  const runId = options.runId === undefined ? newRunId() : parseRunId(options.runId, '--run-id');
  // A wrong path is a usage error now, not an init failure after the install.
  const testCaseProblem = options.testCase === undefined ? undefined : await localTestCaseProblem(options.testCase);
  if (testCaseProblem) throw new InvalidInputError('--test-case', testCaseProblem);
  const format = resolveFormat(options, process.stdout.isTTY === true);
  const abort = new AbortController();
  const sinks = eventSinks(options, spec, runId, format, abort.signal);
  const stub = options.stub ? await startOfflineStub(manifest, spec, defaultRunBase(process.env), runId) : undefined;
  await executeUntilDone(options, spec, runId, sinks, stub, abort);
}

/** Where the run's events go: the terminal always, NATS, OpenTelemetry and an ATIF file when asked for. */
function eventSinks(options: RunOptions, spec: RunSpec, runId: string, format: EventFormat, signal: AbortSignal): EventSink[] {
  const sinks: EventSink[] = [new TerminalSink(process.stdout, { format, fullReasoning: options.fullReasoning, resultFile: options.result })];
  if (options.nats) sinks.push(new NatsSink({ settings: natsSettingsFromEnv(process.env, options.nats, '--nats')!, deliverBy: Date.now() + runLifetimeSeconds(spec) * 1000, fallback: (line) => process.stderr.write(`${line}\n`), warn: (message) => process.stderr.write(`tcab: warning: ${message}\n`), signal }));

  const otelEnv = options.otel ? { ...process.env, TCAB_OTEL: '1' } : process.env;
  if (otelExportEnabled(otelEnv)) sinks.push(new OtelSink({ runId, harness: spec.harness, model: spec.model, env: otelEnv, report: (otel) => process.stderr.write(`tcab: ${describeOtelStats(otel)}\n`) }));

  if (options.atif) sinks.push(new AtifFileSink(options.atif, spec));
  return sinks;
}

/** The run, cancelled by SIGINT, SIGTERM or a closed stdout; its outcome is the exit code. */
async function executeUntilDone(options: RunOptions, spec: RunSpec, runId: string, sinks: EventSink[], stub: OfflineStub | undefined, abort: AbortController): Promise<void> {
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Nobody reads the events any more: cancel the run, but let its teardown finish.
  const restorePipeReaction = onBrokenPipe(onSignal);
  try {
    const result = await executeRun(spec, {
      runId,
      env: process.env,
      sinks,
      user: resolveRunUser(process.env, process.getuid?.() ?? 1000),
      credentialSource: { kind: 'home', home: homedir() },
      stub: stub ? { baseUrl: stub.baseUrl, apiKey: stub.apiKey } : undefined,
      keep: options.keep,
      signal: abort.signal,
      secrets: otelSecrets(process.env),
      gateway: options.gateway,
    });
    // A check that failed a succeeded run is its own status: the agent finished, its work did not pass.
    process.exitCode = result.outcome === 'succeeded' && result.check?.passed === false ? EXIT.checkFailed : OUTCOME_EXIT[result.outcome];
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    restorePipeReaction();
    await stub?.close();
  }
}
