// One run's whole life, the same code on a workstation (`tcab run`) and in a driver Pod (`tcab-driver`):
// auth -> install_harness -> probe_harness -> init_test_case -> session(s) -> teardown -> result, as named steps
// (driver/run/): each reads and writes the run's record (run/state.ts), whose `emit` is the single exit point of
// every event, where secrets are scrubbed and sequence numbers set.
import { runLifetimeSeconds } from '../shared/run.ts';
import type { RunResult, RunSpec } from '../shared/run.ts';
import type { HarnessManifest } from '../shared/manifest.ts';
import type { Clock } from '../shared/translate/session.ts';
import { resolveHarness } from '../harnesses/registry.ts';
import type { CredentialSource } from './credentials.ts';
import { childBaseEnv } from './child-env.ts';
import { writeHomeFiles } from './home-files.ts';
import { createRunDirs } from './run-dirs.ts';
import { baseUrlFor, parseRunSettings, releaseStoreOf } from '../shared/driver-env.ts';
import type { RunSettings } from '../shared/driver-env.ts';
import { localTestCaseProblem } from './test-case.ts';
import { parseRunId } from '../shared/run-id.ts';
import type { RunUser } from './process.ts';
import { StageFailure } from './stages/context.ts';
import type { StageContext } from './stages/context.ts';
import { installHarness, installedBinary } from './stages/install.ts';
import { probeHarness } from './stages/probe.ts';
import { initTestCase } from './stages/init-test-case.ts';
import type { EventSink } from './sinks/sink.ts';
import type { Timers } from './stages/stderr-flush.ts';
import type { GatewayLogger } from '../gateway/index.ts';
import { openRunState } from './run/state.ts';
import type { RunState } from './run/state.ts';
import { resolveRunAuth } from './run/auth.ts';
import { routeThroughGateway } from './run/gateway.ts';
import { checkWorkspace } from './run/check.ts';
import { runSessions } from './run/sessions.ts';
import { runProtocol } from '../shared/run-protocol.ts';
import { failRun, publishResult, releaseRun } from './run/finish.ts';

/** How long past its maximum runtime a run's outside prefix is kept from a later driver's sweep (teardown, a login wait). */
const PREFIX_MARGIN_SECONDS = 3600;

export interface DriverOptions {
  runId: string;
  /**
   * The environment auth is resolved from (host env on a workstation, pod env in a Pod): API keys, auth modes, the
   * network variables children inherit. The driver's own settings are not read from it but from `settings`.
   */
  env: Readonly<Record<string, string | undefined>>;
  /** Run root, npm registry and cache, model endpoints, catalogue: decoded by the driver env schema. Default: from `env`. */
  settings?: RunSettings;
  sinks: EventSink[];
  user: RunUser;
  credentialSource: CredentialSource;
  /** Point the harness at this model endpoint with a throw-away key (the offline stub). */
  stub?: { baseUrl: string; apiKey: string };
  keep?: boolean;
  clock?: Clock;
  /** Timers for the stderr quiet gap (stages/stderr-flush.ts): tests fire them by hand. */
  timers?: Timers;
  signal?: AbortSignal;
  /** Extra values to scrub (e.g. NATS credentials the driver holds). */
  secrets?: string[];
  /** The npm registry's credential (`_auth`: base64 of user:password) for the install stages only (stages/npm-auth.ts). */
  npmAuth?: string;
  /** Where harness folders are (tests point this at generated harnesses). */
  harnessesRoot?: string;
  /** Save each session's raw stdout/stderr here (fixture recording, `tcab harnesses verify`). */
  recordDir?: string;
  /** Files to place in the run user's HOME before the session (e.g. a scenario's skills), HOME-relative. */
  homeFiles?: Record<string, string>;
  /**
   * The model gateway in this process (issue 34; default on): in api-key mode a harness whose manifest routes its key
   * through the gateway gets the gateway's URL and a per-run token, never the key. false: today's injection.
   */
  gateway?: boolean;
  /** Which attempt of the run id this is (a cluster Run's uid): the gateway's token names it. Default: a fresh one. */
  attempt?: string;
  /** Which attempt of a cluster Run this is, of how many (the dispatcher's TCAB_RUN_ATTEMPT_NUMBER, TCAB_RUN_ATTEMPTS): in the result. */
  attemptNumber?: { number: number; of: number };
  /** The driver's own log (the gateway's lines); default none. */
  log?: GatewayLogger;
}

export async function executeRun(spec: RunSpec, options: DriverOptions): Promise<RunResult> {
  // The id names directories and subjects: a caller that skipped its check is refused before anything is touched.
  parseRunId(options.runId, 'runId');
  const settings = await settingsOf(options);
  const run = openRunState(spec, options);
  try {
    await refuseMissingTestCase(spec);
    // A built-in harness's manifest may depend on the model (gg: that provider's key and wire).
    const { manifest, adapter } = await resolveHarness(spec.harness, spec.model, options.harnessesRoot);
    run.manifest = manifest;
    const protocol = runProtocol(spec, manifest);
    run.usageScope = protocol === 'acp' ? 'session' : (adapter.usageScope ?? 'session');
    const auth = resolveRunAuth(run, spec, manifest, options);
    const ctx = (run.ctx = await stageContextFor(run, spec, settings, options));
    const binary = await installAndProbe(run, ctx, manifest);
    await auth.materialize?.();
    await prepareWorkspace(run, ctx, spec, options);
    // A model endpoint override: the offline stub, or an operator's gateway (TCAB_BASE_URL_<SLUG> wins).
    const route = await routeThroughGateway(run, spec, manifest, auth, options.stub?.baseUrl ?? baseUrlFor(settings, manifest.slug), options);
    await runSessions(run, ctx, spec, adapter, binary, route, options.recordDir, protocol);
    if (spec.testCase?.check) await checkWorkspace(run, ctx, spec.testCase.check, options.attemptNumber, run.checkFiles);
  } catch (error) {
    failRun(run, error);
  } finally {
    await releaseRun(run, options.keep === true);
  }
  return publishResult(run, spec, { runId: options.runId, sinks: options.sinks, modelCatalog: settings.TCAB_MODEL_CATALOG, attemptNumber: options.attemptNumber });
}

/**
 * The caller's settings, or its environment's decoded by the same schema (`tcab run`, tests); a bad one is the
 * caller's usage error, thrown before anything runs (the sinks closed, so none holds the process).
 */
async function settingsOf(options: DriverOptions): Promise<RunSettings> {
  try {
    return options.settings ?? parseRunSettings(options.env);
  } catch (error) {
    await Promise.all(options.sinks.map((s) => s.close()));
    throw error;
  }
}

/** A local test case that is not a directory fails now, not after an install. */
async function refuseMissingTestCase(spec: RunSpec): Promise<void> {
  const source = spec.testCase?.source;
  if (!source || !('local' in source)) return;
  const problem = await localTestCaseProblem(source.local.path);
  if (problem) throw new StageFailure('init_test_case', 'infrastructure', `test case: ${problem}`);
}

/** The run's directories, made, and what every stage is given. */
async function stageContextFor(run: RunState, spec: RunSpec, settings: RunSettings, options: DriverOptions): Promise<StageContext> {
  // A prefix outside the run's root outlives a killed driver until the run could no longer be running.
  const prefixPlacement = settings.TCAB_PREFIX_ROOT ? { root: settings.TCAB_PREFIX_ROOT, expiresAt: new Date(Date.now() + (runLifetimeSeconds(spec) + PREFIX_MARGIN_SECONDS) * 1000) } : undefined;
  const dirs = await createRunDirs(settings.TCAB_RUN_ROOT, options.runId, options.user, settings.TCAB_NPM_CACHE, prefixPlacement);
  return {
    runId: options.runId,
    dirs,
    user: options.user,
    deadline: run.deadline,
    signal: run.abort.signal,
    clock: run.clock,
    baseEnv: childBaseEnv(options.env, dirs.prefix, dirs.home, dirs.tmp),
    npmRegistry: settings.TCAB_NPM_REGISTRY,
    npmAuth: options.npmAuth,
    releaseStore: releaseStoreOf(settings, options.env),
    emit: run.emit,
    timings: run.timings,
    timers: options.timers,
  };
}

/** The harness installed (a built-in installs nothing: its entry point runs on this Node) and probed; its binary. */
async function installAndProbe(run: RunState, ctx: StageContext, manifest: HarnessManifest): Promise<string> {
  if (manifest.install) await installHarness(ctx, manifest);
  const binary = manifest.install ? installedBinary(manifest, ctx.dirs.prefix) : process.execPath;
  run.harnessVersion = await probeHarness(ctx, manifest, binary);
  return binary;
}

/**
 * The caller's home files (a scenario's skills) and the test case, in place before the first session; the check's
 * files from git, fetched now (before the agent starts) and kept on the run state until the check.
 */
async function prepareWorkspace(run: RunState, ctx: StageContext, spec: RunSpec, options: DriverOptions): Promise<void> {
  if (options.homeFiles) await writeHomeFiles(ctx.dirs.home, options.user, Object.entries(options.homeFiles).map(([path, content]) => ({ path, content })));
  // A test case that is only an inline check leaves the workspace as the session starts it (no init_test_case stage).
  const { testCase } = spec;
  if (testCase && (testCase.source !== undefined || testCase.init !== undefined || testCase.check === undefined || testCase.check.filesFrom !== undefined)) run.checkFiles = await initTestCase(ctx, testCase);
}
