// `tcab export atif <run-id>`: a finished run, read back from its JetStream stream (the single source: every event
// and the result, no size limit), as one ATIF trajectory (export/atif). The run must have ended: an export of a
// run still going (or of a run id nobody used) is refused at once instead of waiting on the stream. The stream holds
// no spec: with --kubeconfig the prompt (the trajectory's first, user step) comes from the cluster's Run.
import { writeFileSync } from 'node:fs';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { Option } from 'commander';
import { atifSpecOfRun, toAtif } from '../../export/atif/index.ts';
import type { AtifSpec } from '../../export/atif/index.ts';
import { GROUP, VERSION } from '../../shared/api-group.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { statusCode } from '../../kube/errors.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { anotherAttemptMayFollow } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import { clusterRunOf, parseRunId } from '../../shared/run-id.ts';
import { InfrastructureError } from '../../shared/exit-codes.ts';
import { readRunStream } from '../../nats/reader.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { noNextAttemptMessage } from '../../nats/next-attempt.ts';
import { nextAttemptOption, nextAttemptWithinMs } from './next-attempt-option.ts';
import { runHasResult } from '../../nats/run-has-result.ts';
import { checkServerUrls, reasonOf, shownServers } from '../../nats/server-urls.ts';
import { NATS_ENV, natsSettingsFromEnv } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';

interface ExportOptions {
  nats: string;
  creds?: string;
  out?: string;
  kubeconfig?: string;
  context?: string;
  nextAttemptTimeout?: string;
}

/**
 * The spec of the Run a cluster run id names, through the kubeconfig; undefined (with a warning) when the Run has
 * been deleted since, or re-created under its name (its uid is not the attempt the run's result was published
 * under): the trajectory then has no prompt step, as without --kubeconfig, rather than another run's prompt.
 */
async function specFromCluster(run: { namespace: string; name: string }, attempt: string | undefined, options: ExportOptions): Promise<AtifSpec | undefined> {
  const config = new KubeConfig();
  if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
  else config.loadFromDefault();
  if (options.context) config.setCurrentContext(options.context);
  try {
    const object = (await config.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: run.namespace, plural: 'runs', name: run.name })) as { metadata?: { uid?: string }; spec?: Record<string, unknown> };
    if (attempt !== undefined && object.metadata?.uid !== attempt) {
      process.stderr.write(`tcab: Run ${run.namespace}/${run.name} was re-created after this run (uid ${object.metadata?.uid ?? 'none'}, the run's ${attempt}); the trajectory has no prompt step\n`);
      return undefined;
    }
    return atifSpecOfRun(object.spec);
  } catch (error) {
    if (statusCode(error) !== 404) throw new InfrastructureError(`cannot read Run ${run.namespace}/${run.name} through the kubeconfig (context ${config.getCurrentContext()}): ${reasonOf(error)}`, { cause: error });
    process.stderr.write(`tcab: Run ${run.namespace}/${run.name} is no longer in the cluster; the trajectory has no prompt step\n`);
    return undefined;
  }
}

function settingsOf(options: ExportOptions): NatsSettings {
  checkServerUrls(options.nats.split(',').map((s) => s.trim()), '--nats');
  const env = options.creds ? { ...process.env, [NATS_ENV.credsFile]: options.creds } : process.env;
  return natsSettingsFromEnv(env, options.nats, '--nats')!;
}

/**
 * The run's events and result, read to its last attempt's result. A result another attempt may follow is read past;
 * when no message of a later attempt comes within `withinMs` (the Run cancelled or deleted during the back-off),
 * that result stands and is exported, with a warning.
 */
async function readFinishedRun(settings: NatsSettings, runId: string, withinMs: number): Promise<{ events: HarnessEvent[]; result: RunResult; attempt: string | undefined }> {
  const events: { event: HarnessEvent; attempt?: number }[] = [];
  // The last attempt's events: those its driver published (Tcab-Attempt) and the cluster's (which carry none).
  const exported = (item: Extract<StreamItem, { kind: 'result' }>) => {
    const last = item.result.attempt?.number;
    const kept = last === undefined ? events : events.filter((e) => e.attempt === undefined || e.attempt === last);
    return { events: kept.map((e) => e.event), result: item.result, attempt: item.attempt };
  };
  let pending: Extract<StreamItem, { kind: 'result' }> | undefined;
  let standing = false;
  const onNoNextAttempt = (result: RunResult) => {
    standing = true;
    process.stderr.write(`tcab: run ${runId}: ${noNextAttemptMessage(result, withinMs)}\n`);
  };
  for await (const item of readRunStream({ settings, runId, replay: true, untilResult: true, nextAttemptWithinMs: withinMs, onNoNextAttempt })) {
    if (item.kind === 'result') {
      // An earlier attempt's result (another may follow): the trajectory is the last attempt's, read on.
      if (anotherAttemptMayFollow(item.result)) {
        pending = item;
        continue;
      }
      return exported(item);
    }
    if (item.kind === 'invalid' && item.isResult) throw new InfrastructureError(`run ${runId}: its result record (${item.subject}) is invalid: ${item.reason}`);
    if (item.kind === 'invalid') process.stderr.write(`tcab: the message on ${item.subject} is not a valid event (${item.reason}); left out of the trajectory\n`);
    // An invalid message stays in order as the `unknown` event it decodes to: the trajectory counts it as left out.
    events.push({ event: item.event, ...(item.kind === 'event' && item.attempt !== undefined ? { attempt: item.attempt } : {}) });
  }
  if (standing && pending) return exported(pending);
  throw new InfrastructureError(`the stream from NATS at ${shownServers(settings.servers)} ended before run ${runId}'s result`);
}

export function registerExportCommands(program: Command): void {
  const exporter = program.command('export').description('write a finished run in a format other tools read');
  exporter
    .command('atif')
    .description("a finished run as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format), read from NATS")
    .argument('<run-id>', 'the run to export (letters, digits, "-" and "_")')
    .addOption(new Option('--nats <url>', 'NATS server (several: comma-separated)').env('TCAB_NATS_URL').default('nats://127.0.0.1:4222'))
    .option('--creds <file>', `NATS credentials file (default: $${NATS_ENV.credsFile})`)
    .option('--out <file>', 'write the trajectory to this file (default: standard output)')
    .option('--kubeconfig <file>', "read the cluster Run's prompt through this kubeconfig (the stream holds no prompt)")
    .option('--context <name>', 'kubeconfig context (default: its current one); implies reading the Run')
    .addOption(nextAttemptOption())
    .addHelpText('after', "\nExample:\n  tcab export atif default_fix-tests --nats nats://127.0.0.1:4222 --kubeconfig ~/.kube/config --out trajectory.json\n\nExit status: 0 written; 2 a bad run id or option; 3 NATS or the cluster unreachable, the run has no result yet (running, or unknown), or its result is invalid.\nA result another attempt may follow with no attempt after it within --next-attempt-timeout: that attempt is exported (0, with a warning).")
    .action(async (runIdArgument: string, options: ExportOptions) => {
      const runId = parseRunId(runIdArgument, '<run-id>');
      const withinMs = nextAttemptWithinMs(options.nextAttemptTimeout ?? '');
      const clusterRun = options.kubeconfig || options.context ? clusterRunOf(runId) : undefined;
      if ((options.kubeconfig || options.context) && !clusterRun) throw new InvalidInputError('<run-id>', `${runId} is not the id of a cluster Run (<namespace>_<name>), so --kubeconfig has no Run to read`);
      const settings = settingsOf(options);
      if (!(await runHasResult(settings, runId))) {
        throw new InfrastructureError(`run ${runId} has no result on NATS at ${shownServers(settings.servers)}: it is still running or was never run (\`tcab events follow ${runId}\` shows it live)`);
      }
      const { events, result, attempt } = await readFinishedRun(settings, runId, withinMs);
      const fromCluster = clusterRun ? await specFromCluster(clusterRun, attempt, options) : undefined;
      // Without the Run, harness and model come from the result and the prompt is not known.
      const trajectory = toAtif({ runId, events, result, spec: fromCluster ?? { harness: result.harness_slug, model: result.model } });
      const text = `${JSON.stringify(trajectory, null, 2)}\n`;
      if (options.out) writeFileSync(options.out, text);
      else process.stdout.write(text);
    });
}
