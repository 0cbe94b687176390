// `tcab eval apply FILE` and `tcab eval status|watch|export|resume NAME`: an Evaluation in a cluster, through the
// kubeconfig (as kubectl reads it: --kubeconfig, else KUBECONFIG, else ~/.kube/config; --context; -n, else the
// context's namespace). apply reads the file's directory and git sources here and puts them in ConfigMaps (apply.ts):
// the dispatcher never reads a directory or clones a repository. The status is
// the controller's (the dispatcher's Evaluation controller keeps it current); export adds each Run's own figures;
// resume deletes the Runs whose slot has no standing result, and the controller makes them again.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Option } from 'commander';
import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import pc from 'picocolors';
import { InvalidInputError } from '../../../shared/errors.ts';
import { InfrastructureError } from '../../../shared/exit-codes.ts';
import { evaluationCsv, formatEvaluationTable } from '../../../shared/evaluation/format.ts';
import type { EvaluationStatus } from '../../../shared/evaluation/schema.ts';
import { CELL_LABEL, EVALUATION_LABEL, MODEL_ANNOTATION, REPEAT_LABEL, TEST_CASE_LABEL, evaluationLabelValue } from '../../../shared/evaluation/slots.ts';
import { FINAL_PHASES } from '../../../shared/run-status.ts';
import type { RunPhase } from '../../../shared/run-status.ts';
import { errorMessage, statusCode } from '../../../kube/errors.ts';
import { EVALUATIONS, evaluationsPath, GROUP, RUNS, VERSION } from '../../../kube/resources.ts';
import type { EvaluationObject, RunObject } from '../../../kube/resources.ts';
import { EVALUATION_KIND, evaluationOwnerOf } from '../../../kube/evaluation-owner.ts';
import { TEST_CASES_LABEL } from '../../../shared/evaluation/test-case-sources.ts';
import { planApply } from './apply.ts';
import { readEvaluationFile, readSourcesOf } from './document.ts';

interface ClusterOptions {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

interface Cluster {
  config: KubeConfig;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  namespace: string;
  /** Whether -n named the namespace (else the context's, or default). */
  namespaceGiven: boolean;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * An Evaluation's name as Kubernetes allows it (a DNS subdomain, at most 253 characters): anything else could not
 * name one, and it goes into a field selector and a URL path, where "," or "/" would mean something else.
 */
export function evaluationNameArg(name: string): string {
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) throw new InvalidInputError('NAME', `"${name.slice(0, 80)}" is not an Evaluation name (lower case letters, digits, "-" and ".", at most 253 characters)`);
  return name;
}

/** A namespace (a DNS label) from -n, checked for the same reason. */
export function namespaceArg(namespace: string): string {
  if (!DNS_LABEL.test(namespace)) throw new InvalidInputError('--namespace', `"${namespace.slice(0, 80)}" is not a namespace name (lower case letters, digits and "-", at most 63 characters)`);
  return namespace;
}

function clusterOf(options: ClusterOptions): Cluster {
  const config = new KubeConfig();
  try {
    if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
    else config.loadFromDefault();
    if (options.context) config.setCurrentContext(options.context);
  } catch (error) {
    throw new InvalidInputError(options.kubeconfig ? '--kubeconfig' : 'KUBECONFIG', `cannot read the kubeconfig: ${(error as Error).message}`);
  }
  const namespace = namespaceArg(options.namespace ?? config.getContextObject(config.getCurrentContext())?.namespace ?? 'default');
  return { config, custom: config.makeApiClient(CustomObjectsApi), core: config.makeApiClient(CoreV1Api), namespace, namespaceGiven: options.namespace !== undefined };
}


async function getEvaluation(cluster: Cluster, name: string): Promise<EvaluationObject> {
  try {
    return (await cluster.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: cluster.namespace, plural: EVALUATIONS, name })) as EvaluationObject;
  } catch (error) {
    if (statusCode(error) === 404) throw new InvalidInputError('NAME', `no Evaluation ${name} in namespace ${cluster.namespace} (kubectl get evaluations -n ${cluster.namespace})`);
    throw new InfrastructureError(`cannot read Evaluation ${cluster.namespace}/${name} (context ${cluster.config.getCurrentContext()}): ${errorMessage(error)}`, { cause: error });
  }
}

/** The Evaluation's own Runs: its label, and its owner reference (a Run of an older Evaluation of that name is not). */
async function runsOf(cluster: Cluster, evaluation: EvaluationObject): Promise<RunObject[]> {
  const runs: RunObject[] = [];
  let next: string | undefined;
  do {
    const page = (await cluster.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: cluster.namespace, plural: RUNS, labelSelector: `${EVALUATION_LABEL}=${evaluationLabelValue(evaluation.metadata!.name!)}`, limit: 500, ...(next ? { _continue: next } : {}) })) as { items: RunObject[]; metadata?: { _continue?: string } };
    runs.push(...page.items.filter((run) => evaluationOwnerOf(run)?.uid === evaluation.metadata!.uid));
    next = page.metadata?._continue || undefined;
  } while (next);
  return runs;
}

/** The line above the table: which Evaluation, and what its controller says when the spec is refused or a slot is held. */
function heading(evaluation: EvaluationObject, color: boolean): string {
  const c = pc.createColors(color);
  const { name, namespace, generation } = evaluation.metadata!;
  const status = evaluation.status;
  const phase = status?.phase ?? 'not reconciled yet (is the dispatcher running?)';
  const stale = status?.observedGeneration !== undefined && generation !== undefined && status.observedGeneration < generation ? c.yellow(' (status of an older spec)') : '';
  const lines = [`${c.bold(`Evaluation ${namespace}/${name}`)}: ${phase}${stale}`];
  if (status?.message) lines.push(status.phase === 'Invalid' ? c.red(`  ${status.message}`) : c.yellow(`  ${status.message}`));
  return lines.join('\n');
}

function printStatus(evaluation: EvaluationObject, json: boolean, color: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ evaluation: evaluation.metadata!.name, namespace: evaluation.metadata!.namespace, generation: evaluation.metadata!.generation, status: evaluation.status ?? null })}\n`);
    return;
  }
  const table = evaluation.status?.phase === 'Invalid' || !evaluation.status ? '' : `\n${formatEvaluationTable(evaluation.status as EvaluationStatus, { color })}`;
  process.stdout.write(`${heading(evaluation, color)}${table}\n`);
}

const isDone = (evaluation: EvaluationObject) => evaluation.status?.phase === 'Completed' || evaluation.status?.phase === 'Invalid';

/**
 * Follows the Evaluation until it is Completed (or refused): the table again on each change, or a JSON line on a pipe.
 * Each round reads the object, prints it when its status changed, and waits on a watch from that version for the
 * next change, the watch closing (the apiserver ends watches now and then), or 30 s, whichever is first.
 */
async function watchEvaluation(cluster: Cluster, name: string, json: boolean): Promise<void> {
  const color = process.stdout.isTTY === true;
  let last: string | undefined;
  let interrupted = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    interrupted = true;
    wake?.();
  };
  process.once('SIGINT', stop);
  try {
    while (!interrupted) {
      const evaluation = await getEvaluation(cluster, name);
      const now = JSON.stringify(evaluation.status ?? null);
      if (now !== last) printStatus(evaluation, json, color);
      last = now;
      if (isDone(evaluation)) return;
      await nextChange(cluster, name, evaluation.metadata!.resourceVersion!, (w) => (wake = w));
    }
  } finally {
    process.off('SIGINT', stop);
  }
}

/** Resolves at the Evaluation's next change after `resourceVersion`, when the watch ends, or after 30 s. */
async function nextChange(cluster: Cluster, name: string, resourceVersion: string, onWake: (wake: () => void) => void): Promise<void> {
  let request: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  await new Promise<void>((resolve, reject) => {
    const done = () => resolve();
    onWake(done);
    timer = setTimeout(done, 30_000);
    new Watch(cluster.config)
      .watch(evaluationsPath(cluster.namespace), { fieldSelector: `metadata.name=${name}`, resourceVersion, allowWatchBookmarks: false }, (type: string) => {
        if (type !== 'BOOKMARK') done();
      }, done)
      .then((req) => {
        request = req;
        if (settled) req.abort(); // the round ended before the watch was open: close it, or it holds the process
      }, (error: unknown) => reject(new InfrastructureError(`cannot watch Evaluation ${cluster.namespace}/${name}: ${errorMessage(error)}`, { cause: error })));
  }).finally(() => {
    settled = true;
    clearTimeout(timer);
    request?.abort();
  });
}

/** One Run of an export: its slot and what it came to (its status' figures; the output of its check is in its result). */
function runRow(run: RunObject) {
  const labels = run.metadata?.labels ?? {};
  const s = run.status ?? {};
  return {
    run: run.metadata!.name,
    harness: labels['tcab.dev/harness'] ?? run.spec.harness,
    model: run.metadata?.annotations?.[MODEL_ANNOTATION] ?? run.spec.model,
    cell: labels[CELL_LABEL],
    test_case: labels[TEST_CASE_LABEL],
    repeat: Number(labels[REPEAT_LABEL]),
    phase: s.phase ?? 'Pending',
    outcome: s.outcome ?? null,
    check: s.check ?? null,
    usage: s.usage ?? null,
    actual_cost_usd: s.actualCostUsd ?? null,
    comparable_cost_usd: s.comparableCostUsd ?? null,
    harness_version: s.harnessVersion ?? null,
    attempts: s.attempts?.length ?? 0,
    start_time: s.startTime ?? null,
    completion_time: s.completionTime ?? null,
  };
}

/** A slot with no standing result: its Run ended without a verdict the evaluation keeps (infrastructure, cancelled). */
export function runsToRunAgain(runs: readonly RunObject[]): RunObject[] {
  return runs.filter((run) => {
    const phase = run.status?.phase as RunPhase | undefined;
    if (!phase || !FINAL_PHASES.has(phase)) return false;
    const outcome = run.status?.outcome;
    return outcome === undefined || outcome === 'infrastructure_failed' || outcome === 'cancelled';
  });
}

async function resume(cluster: Cluster, name: string, dryRun: boolean): Promise<void> {
  const evaluation = await getEvaluation(cluster, name);
  const again = runsToRunAgain(await runsOf(cluster, evaluation));
  for (const run of again) {
    process.stdout.write(`${dryRun ? 'would run again' : 'running again'}: ${run.metadata!.name} (${runRow(run).harness} × ${runRow(run).model} · ${runRow(run).test_case} #${runRow(run).repeat}: ${run.status?.outcome ?? 'no outcome'})\n`);
    if (dryRun) continue;
    await cluster.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: cluster.namespace, plural: RUNS, name: run.metadata!.name!, propagationPolicy: 'Background' }).catch((error: unknown) => {
      if (statusCode(error) !== 404) throw new InfrastructureError(`cannot delete Run ${cluster.namespace}/${run.metadata!.name}: ${errorMessage(error)}`, { cause: error });
    });
  }
  process.stdout.write(`${again.length} run(s) ${dryRun ? 'would be' : 'are'} run again; every scored run is kept${dryRun ? '' : ` (the controller makes the deleted ones again: tcab eval watch ${name})`}\n`);
}

async function exportEvaluation(cluster: Cluster, name: string, options: { csv?: boolean; json?: boolean; out?: string }): Promise<void> {
  const evaluation = await getEvaluation(cluster, name);
  let text: string;
  if (options.csv) {
    text = evaluationCsv((evaluation.status ?? {}) as EvaluationStatus);
  } else {
    const runs = (await runsOf(cluster, evaluation)).map(runRow).sort((a, b) => String(a.run).localeCompare(String(b.run)));
    const { name: evalName, namespace, uid, generation, creationTimestamp } = evaluation.metadata!;
    text = `${JSON.stringify({ evaluation: { name: evalName, namespace, uid, generation, creationTimestamp }, spec: evaluation.spec, status: evaluation.status ?? null, runs }, null, 2)}\n`;
  }
  if (options.out) writeFileSync(options.out, text);
  else process.stdout.write(text);
}

/** What went wrong talking to the cluster, as an InfrastructureError naming the object. */
const clusterError = (cluster: Cluster, what: string, error: unknown) => new InfrastructureError(`cannot ${what} (context ${cluster.config.getCurrentContext()}): ${errorMessage(error)}`, { cause: error });

/** The Evaluation as it stands, or undefined when there is none. */
async function readEvaluation(cluster: Cluster, name: string): Promise<EvaluationObject | undefined> {
  try {
    return (await cluster.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: cluster.namespace, plural: EVALUATIONS, name })) as EvaluationObject;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw clusterError(cluster, `read Evaluation ${cluster.namespace}/${name}`, error);
  }
}

/** Creates the Evaluation, or replaces its spec (and labels, annotations) keeping its uid, status and Runs. */
async function putEvaluation(cluster: Cluster, object: EvaluationObject, existing: EvaluationObject | undefined): Promise<EvaluationObject> {
  const name = object.metadata!.name!;
  const at = { group: GROUP, version: VERSION, namespace: cluster.namespace, plural: EVALUATIONS };
  try {
    if (!existing) return (await cluster.custom.createNamespacedCustomObject({ ...at, body: object })) as EvaluationObject;
    const body = { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata!.resourceVersion } };
    return (await cluster.custom.replaceNamespacedCustomObject({ ...at, name, body })) as EvaluationObject;
  } catch (error) {
    const code = statusCode(error);
    if (code === 422 || code === 400) throw new InvalidInputError('FILE', `the apiserver refused Evaluation ${cluster.namespace}/${name}: ${errorMessage(error)}`, { cause: error });
    if (code === 409) throw new InfrastructureError(`Evaluation ${cluster.namespace}/${name} changed while it was applied: apply again`, { cause: error });
    throw clusterError(cluster, `write Evaluation ${cluster.namespace}/${name}`, error);
  }
}

/**
 * Creates the ConfigMap, or replaces one that is this Evaluation's: owned by it, or (owner undefined, or a run of
 * apply stopped before it adopted it) unowned and labelled with its name. One of another owner is never touched.
 */
async function putConfigMap(cluster: Cluster, configMap: V1ConfigMap, evaluation: string, ownerUid: string | undefined): Promise<'created' | 'configured' | 'unchanged'> {
  const name = configMap.metadata!.name!;
  let existing: V1ConfigMap | undefined;
  try {
    existing = await cluster.core.readNamespacedConfigMap({ name, namespace: cluster.namespace });
  } catch (error) {
    if (statusCode(error) !== 404) throw clusterError(cluster, `read ConfigMap ${cluster.namespace}/${name}`, error);
  }
  try {
    if (!existing) {
      await cluster.core.createNamespacedConfigMap({ namespace: cluster.namespace, body: configMap });
      return 'created';
    }
    const owners = existing.metadata?.ownerReferences ?? [];
    const ours = owners.some((o) => o.kind === EVALUATION_KIND && o.uid === ownerUid) || (owners.length === 0 && existing.metadata?.labels?.[EVALUATION_LABEL] === evaluationLabelValue(evaluation));
    if (!ours) throw new InvalidInputError('FILE', `ConfigMap ${cluster.namespace}/${name} exists and is not this Evaluation's: delete or rename it (tcab eval apply names the ConfigMap of spec.testCasesFrom[i] <evaluation>-cases-<i>-<hash>)`);
    // Named by its content: the same name holds the same test cases; only the owner may be new.
    const sameOwners = JSON.stringify(owners) === JSON.stringify(configMap.metadata!.ownerReferences ?? []);
    if (sameOwners && JSON.stringify(existing.data ?? {}) === JSON.stringify(configMap.data ?? {})) return 'unchanged';
    await cluster.core.replaceNamespacedConfigMap({ name, namespace: cluster.namespace, body: { ...configMap, metadata: { ...configMap.metadata, resourceVersion: existing.metadata!.resourceVersion } } });
    return 'configured';
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    const code = statusCode(error);
    if (code === 422 || code === 400) throw new InvalidInputError('FILE', `the apiserver refused ConfigMap ${cluster.namespace}/${name}: ${errorMessage(error)}`, { cause: error });
    throw clusterError(cluster, `write ConfigMap ${cluster.namespace}/${name}`, error);
  }
}

/**
 * `tcab eval apply FILE`. The ConfigMaps first (named by their content: an edit is a new ConfigMap), then the
 * Evaluation naming them, so the controller never meets a spec whose test cases are not there yet nor new test cases
 * under the old spec; then the ConfigMaps an earlier apply made for it that the spec no longer names are deleted.
 * An Evaluation that exists owns its new ConfigMaps from the start; a new one adopts them once created (its uid is
 * known only then).
 */
async function applyEvaluation(cluster: Cluster, file: string, dryRun: boolean): Promise<void> {
  const evaluation = readEvaluationFile(file);
  // The file's metadata.namespace, as kubectl takes it: where it goes unless -n says otherwise (then they must agree).
  if (evaluation.namespace !== undefined) {
    if (cluster.namespaceGiven && evaluation.namespace !== cluster.namespace) throw new InvalidInputError('--namespace', `${cluster.namespace} is not the namespace ${file} names (metadata.namespace: ${evaluation.namespace})`);
    cluster = { ...cluster, namespace: evaluation.namespace };
  }
  const plan = planApply(evaluation, readSourcesOf(evaluation), cluster.namespace);
  const name = evaluation.name;
  if (dryRun) {
    const objects = [plan.evaluation, ...plan.configMaps({ name, uid: '<uid of the Evaluation>' })];
    process.stdout.write(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`);
    return;
  }
  const existing = await readEvaluation(cluster, name);
  const before = existing ? { name, uid: existing.metadata!.uid! } : undefined;
  const said = (configMap: V1ConfigMap, done: string) => process.stdout.write(`configmap/${configMap.metadata!.name} ${done} (${Object.keys(configMap.data ?? {}).length} test case(s))\n`);
  for (const configMap of plan.configMaps(before)) said(configMap, await putConfigMap(cluster, configMap, name, before?.uid));
  const applied = await putEvaluation(cluster, plan.evaluation, existing);
  const uid = applied.metadata!.uid!;
  process.stdout.write(`evaluation.${GROUP}/${name} ${existing ? 'configured' : 'created'}\n`);
  // A new Evaluation: its ConfigMaps were written before it had a uid; now it owns them (deleting it deletes them).
  if (!before) for (const configMap of plan.configMaps({ name, uid })) await putConfigMap(cluster, configMap, name, uid);
  // ConfigMaps of an earlier apply (this Evaluation's, by uid) that the spec no longer names.
  let stale: V1ConfigMap[];
  try {
    const listed = await cluster.core.listNamespacedConfigMap({ namespace: cluster.namespace, labelSelector: `${TEST_CASES_LABEL},${EVALUATION_LABEL}=${evaluationLabelValue(name)}` });
    stale = listed.items.filter((c) => c.metadata?.ownerReferences?.some((o) => o.kind === EVALUATION_KIND && o.uid === uid) && !plan.configMapNames.includes(c.metadata!.name!));
  } catch (error) {
    throw clusterError(cluster, `list the ConfigMaps of Evaluation ${cluster.namespace}/${name}`, error);
  }
  for (const configMap of stale) {
    await cluster.core.deleteNamespacedConfigMap({ name: configMap.metadata!.name!, namespace: cluster.namespace }).catch((error: unknown) => {
      if (statusCode(error) !== 404) throw clusterError(cluster, `delete ConfigMap ${cluster.namespace}/${configMap.metadata!.name}`, error);
    });
    process.stdout.write(`configmap/${configMap.metadata!.name} deleted (no longer named by the spec)\n`);
  }
  process.stdout.write(`follow it: tcab eval watch ${name} -n ${cluster.namespace}\n`);
}

export function registerClusterEvalCommands(group: Command): void {
  const withCluster = (command: Command) =>
    command
      .option('-n, --namespace <ns>', "the Evaluation's namespace (default: the kubeconfig context's, else default)")
      .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, else ~/.kube/config)')
      .option('--context <name>', 'kubeconfig context (default: its current one)');
  withCluster(
    group
      .command('apply')
      .description("create or replace an Evaluation in the cluster from FILE: the test cases of each directory or git source are read here and put in a ConfigMap <name>-cases-<index> owned by the Evaluation (the dispatcher never reads a directory or clones a repository); inline and configMap sources pass through")
      .argument('<file>', 'the evaluation: YAML or JSON, an Evaluation object (kind, metadata.name, spec) or its spec alone (named after the file)')
      .option('--dry-run', 'print the objects it would write (a List), write nothing'),
  ).action(async (file: string, options: ClusterOptions & { dryRun?: boolean }) => applyEvaluation(clusterOf(options), file, options.dryRun === true));
  withCluster(group.command('status').description("an Evaluation in the cluster: its progress and the harness x model table, as its controller wrote them").argument('<name>', 'the Evaluation').option('--json', 'the status as JSON'))
    .action(async (name: string, options: ClusterOptions & { json?: boolean }) => printStatus(await getEvaluation(clusterOf(options), evaluationNameArg(name)), options.json === true, process.stdout.isTTY === true));
  withCluster(group.command('watch').description('follow an Evaluation in the cluster until every Run is final: the table again on each change (a JSON line each on a pipe)').argument('<name>', 'the Evaluation').option('--json', 'a JSON line per change (default when stdout is not a terminal)'))
    .action(async (name: string, options: ClusterOptions & { json?: boolean }) => watchEvaluation(clusterOf(options), evaluationNameArg(name), options.json === true || process.stdout.isTTY !== true));
  withCluster(
    group
      .command('export')
      .description('an Evaluation in the cluster as data: --csv one row per cell; --json the spec, the status and every Run with its slot and figures')
      .argument('<name>', 'the Evaluation')
      .addOption(new Option('--csv', 'one row per harness x model cell (the columns of tcab eval run\'s summary.csv)').conflicts('json'))
      .addOption(new Option('--json', 'spec, status and runs (default)'))
      .option('--out <file>', 'write there instead of stdout'),
  ).action(async (name: string, options: ClusterOptions & { csv?: boolean; json?: boolean; out?: string }) => exportEvaluation(clusterOf(options), evaluationNameArg(name), options));
  withCluster(
    group
      .command('resume')
      .description('run again the slots of an Evaluation whose Run ended with no standing result (infrastructure failure, cancelled): their Runs are deleted and its controller makes them again; scored runs are kept')
      .argument('<name>', 'the Evaluation')
      .option('--dry-run', 'list them, delete nothing'),
  ).action(async (name: string, options: ClusterOptions & { dryRun?: boolean }) => resume(clusterOf(options), evaluationNameArg(name), options.dryRun === true));
}
