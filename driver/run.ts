// One run's whole life, the same code on a workstation (`tcab run`) and in a driver Pod (`tcab-driver`):
// auth -> install_harness -> probe_harness -> init_test_case -> session(s) -> teardown -> result.
// Every event leaves through `emit`, the single exit point where secrets are scrubbed and sequence numbers set.
import type { HarnessEvent } from '../shared/events.ts';
import type { RunResult, RunSpec, SessionRecord, Outcome } from '../shared/run.ts';
import type { HarnessManifest } from '../shared/manifest.ts';
import type { HarnessAdapter } from '../shared/adapter.ts';
import { addTokens } from '../shared/usage.ts';
import type { TokenUsage } from '../shared/usage.ts';
import { systemClock } from '../shared/translate/session.ts';
import type { Clock } from '../shared/translate/session.ts';
import { resolveHarness } from '../harnesses/registry.ts';
import { resolveAuth } from '../shared/auth.ts';
import { credentialPresenceChecker, materializeCredentials } from './credentials.ts';
import type { CredentialSource } from './credentials.ts';
import { holdLogin, loginBusyMessage } from './login-lock.ts';
import type { HeldLogin } from './login-lock.ts';
import { priceRun } from '../shared/cost.ts';
import { loadCatalog } from '../shared/catalog/load.ts';
import { SecretScrubber } from './scrub.ts';
import { childBaseEnv, proxySecrets } from './child-env.ts';
import { writeHomeFiles } from './home-files.ts';
import { createRunDirs } from './run-dirs.ts';
import { baseUrlFor, parseRunSettings, releaseStoreOf } from '../shared/driver-env.ts';
import type { RunSettings } from '../shared/driver-env.ts';
import { localTestCaseProblem } from './test-case.ts';
import { parseRunId } from '../shared/run-id.ts';
import type { RunUser } from './process.ts';
import { StageFailure, asStageFailure } from './stages/context.ts';
import type { FailedStage, StageContext, StageTimingRecord } from './stages/context.ts';
import { installHarness, installedBinary } from './stages/install.ts';
import { probeHarness } from './stages/probe.ts';
import { initTestCase } from './stages/init-test-case.ts';
import { runSession } from './stages/session.ts';
import { teardown } from './stages/teardown.ts';
import type { EventSink } from './sinks/sink.ts';
import type { Timers } from './stages/stderr-flush.ts';
import { npmAuthSecrets } from './stages/npm-auth.ts';
import { hostGateway } from './gateway-host.ts';
import type { HostedGateway } from './gateway-host.ts';
import { joinGateway } from './cluster-gateway.ts';
import { throttleMessage, throttleNews } from './throttle-news.ts';
import type { GatewayLogger } from '../gateway/index.ts';
import { GATEWAY_PROVIDER_VARIABLE, GATEWAY_URL_VARIABLE, usageDisagreements } from '../shared/gateway.ts';
import type { BudgetExceeded, GatewayThrottle, WireAccount } from '../shared/gateway.ts';
import { gatewayProviderFor } from '../shared/gateway-route.ts';
import { randomUUID } from 'node:crypto';

/** The gateway's log when the caller gives none. */
/** How long past its maximum runtime a run's outside prefix is kept from a later driver's sweep (teardown, a login wait). */
const PREFIX_MARGIN_SECONDS = 3600;
const SILENT: GatewayLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

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

/** A run's usage: the sum over sessions, or the last report when the harness counts the whole thread. */
export function runTokens(sessions: SessionRecord[], scope: 'session' | 'thread' = 'session'): TokenUsage | null {
  const reported = sessions.map((s) => s.tokens).filter((t): t is TokenUsage => t !== null);
  if (reported.length === 0) return null;
  return scope === 'thread' ? reported.at(-1)! : reported.reduce(addTokens);
}

function sumReportedCost(sessions: SessionRecord[]): number | null {
  const costs = sessions.map((s) => s.reported_cost_usd).filter((c): c is number => c !== null);
  return costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
}

export async function executeRun(spec: RunSpec, options: DriverOptions): Promise<RunResult> {
  // The id names directories and subjects: a caller that skipped its check is refused before anything is touched.
  parseRunId(options.runId, 'runId');
  // A caller without settings (`tcab run`, tests) has them decoded from its environment by the same schema; a bad
  // one is the caller's usage error, thrown before anything runs (the sinks closed, so none holds the process).
  let settings: RunSettings;
  try {
    settings = options.settings ?? parseRunSettings(options.env);
  } catch (error) {
    await Promise.all(options.sinks.map((s) => s.close()));
    throw error;
  }
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const scrubber = new SecretScrubber();
  scrubber.add(...(options.secrets ?? []), ...proxySecrets(options.env), ...npmAuthSecrets(options.npmAuth));
  let seq = 0;
  const emit = (event: HarnessEvent) => {
    const clean = scrubber.event(event, () => clock.now().toISOString());
    seq += 1;
    for (const sink of options.sinks) sink.event({ runId: options.runId, seq, event: clean });
  };
  const now = () => clock.now().toISOString();
  const timings: StageTimingRecord[] = [];
  const deadline = Date.now() + spec.maxRuntimeSeconds * 1000;
  // The caller's cancel, and the gateway's "budget reached": either stops the harness's process group.
  const runAbort = new AbortController();
  if (options.signal?.aborted) runAbort.abort(options.signal.reason);
  else options.signal?.addEventListener('abort', () => runAbort.abort(options.signal!.reason), { once: true });
  const signal = runAbort.signal;
  let budgetHit: BudgetExceeded | undefined;
  let hosted: HostedGateway | undefined;
  let wire: WireAccount | null = null;

  let manifest: HarnessManifest | undefined;
  let usageScope: 'session' | 'thread' = 'session';
  let harnessVersion: string | null = null;
  let authMode: 'api-key' | 'subscription' | null = null;
  const sessions: SessionRecord[] = [];
  const rawUsage: unknown[] = [];
  let outcome: Outcome = 'succeeded';
  let message = '';
  let retryable = false;
  let ctx: StageContext | undefined;
  let login: HeldLogin | undefined;
  // What is running now, so an unexpected error is reported against it (stages report their own failures).
  let running: FailedStage = 'driver';

  try {
    // A local test case that is not a directory fails now, not after an install.
    const testCaseSource = spec.testCase?.source;
    if (testCaseSource && 'local' in testCaseSource) {
      const problem = await localTestCaseProblem(testCaseSource.local.path);
      if (problem) throw new StageFailure('init_test_case', 'infrastructure', `test case: ${problem}`);
    }
    // A built-in harness's manifest may depend on the model (gg: that provider's key and wire).
    const resolved = await resolveHarness(spec.harness, spec.model, options.harnessesRoot);
    manifest = resolved.manifest;
    const adapter: HarnessAdapter = resolved.adapter;
    usageScope = adapter.usageScope ?? 'session';

    // Auth is resolved before anything is installed: an unavailable harness fails before a session is spent.
    let secretEnv: Record<string, string> = {};
    let pendingCredentials: (() => Promise<void>) | undefined;
    const runManifest = manifest;
    let keyVar: string | undefined;
    if (options.stub) {
      authMode = 'api-key';
      if (manifest.auth.api_key) secretEnv = { [manifest.auth.api_key.inject_as]: options.stub.apiKey, ...manifest.auth.api_key.inject_env };
      keyVar = manifest.auth.api_key?.host_vars[0];
    } else {
      running = 'auth';
      const resolution = resolveAuth(manifest.auth, manifest.slug, {
        env: options.env,
        credentialFilePresent: credentialPresenceChecker(options.credentialSource),
        specOverride: spec.authMode,
      });
      if (!resolution.available) {
        throw new StageFailure('auth', 'infrastructure', `${manifest.name} is not available: ${resolution.reason}`);
      }
      authMode = resolution.mode;
      if (resolution.mode === 'api-key') keyVar = resolution.keyVar;
      running = 'driver';
      pendingCredentials = async () => {
        running = 'auth';
        // A login whose refresh token rotates on use: one run at a time holds it (login-lock.ts); the wait is
        // queueing, so it does not count against the run's maximum runtime.
        const waitStarted = Date.now();
        login = await holdLogin(runManifest, resolution, options.credentialSource, {
          signal,
          onWait: (holder) => emit({ type: 'warning', timestamp: now(), message: loginBusyMessage(runManifest, holder), code: 'login_busy' }),
        }).catch((error: unknown) => {
          throw signal.aborted ? new StageFailure('auth', 'cancelled', 'cancelled while waiting for the login', { cause: error }) : error;
        });
        ctx!.deadline += Date.now() - waitStarted;
        const materialized = await materializeCredentials(resolution, {
          env: options.env,
          source: options.credentialSource,
          runHome: ctx!.dirs.home,
          runUid: options.user.uid,
          runGid: options.user.gid,
        });
        scrubber.add(...materialized.secrets);
        secretEnv = materialized.env;
        running = 'driver';
      };
    }

    // A prefix outside the run's root outlives a killed driver until the run could no longer be running.
    const prefixPlacement = settings.TCAB_PREFIX_ROOT ? { root: settings.TCAB_PREFIX_ROOT, expiresAt: new Date(Date.now() + (spec.maxRuntimeSeconds + PREFIX_MARGIN_SECONDS) * 1000) } : undefined;
    const dirs = await createRunDirs(settings.TCAB_RUN_ROOT, options.runId, options.user, settings.TCAB_NPM_CACHE, prefixPlacement);
    ctx = {
      runId: options.runId,
      dirs,
      user: options.user,
      deadline,
      signal,
      clock,
      baseEnv: childBaseEnv(options.env, dirs.prefix, dirs.home, dirs.tmp),
      npmRegistry: settings.TCAB_NPM_REGISTRY,
      npmAuth: options.npmAuth,
      releaseStore: releaseStoreOf(settings, options.env),
      emit,
      timings,
      timers: options.timers,
    };

    // A built-in installs nothing: its entry point runs on this Node.
    if (manifest.install) await installHarness(ctx, manifest);
    const binary = manifest.install ? installedBinary(manifest, dirs.prefix) : process.execPath;
    harnessVersion = await probeHarness(ctx, manifest, binary);
    await pendingCredentials?.();
    if (options.homeFiles) await writeHomeFiles(dirs.home, options.user, Object.entries(options.homeFiles).map(([path, content]) => ({ path, content })));
    if (spec.testCase) await initTestCase(ctx, spec.testCase);

    // A model endpoint override: the offline stub, or an operator's gateway (TCAB_BASE_URL_<SLUG> wins).
    let baseUrl = options.stub?.baseUrl ?? baseUrlFor(settings, manifest.slug);
    // The model gateway: the harness gets its URL and a per-run token; the key stays in this process.
    const injectAs = manifest.auth.api_key?.inject_as;
    const route = authMode === 'api-key' && options.gateway !== false && keyVar && injectAs && secretEnv[injectAs] ? gatewayProviderFor(manifest, keyVar) : undefined;
    if (route && 'provider' in route) {
      running = 'auth';
      const onBudgetExceeded = (exceeded: BudgetExceeded) => {
        budgetHit ??= exceeded;
        emit({ type: 'error', timestamp: now(), message: `budget reached: ${exceeded.message}`, code: 'budget_exceeded' });
        runAbort.abort('budget_exceeded');
      };
      let seenThrottles = new Map<string, number>();
      const onThrottles = (throttles: readonly GatewayThrottle[]) => {
        const { news, seen } = throttleNews(seenThrottles, throttles);
        seenThrottles = seen;
        for (const t of news) emit({ type: 'warning', timestamp: now(), message: throttleMessage(t), code: 'provider_throttled' });
      };
      const clusterGateway = options.env[GATEWAY_URL_VARIABLE];
      if (clusterGateway) {
        // A driver Pod whose key goes through the cluster's gateway: the key variable already holds the run's token.
        const provider = options.env[GATEWAY_PROVIDER_VARIABLE] ?? route.provider;
        if (provider !== route.provider) throw new StageFailure('auth', 'infrastructure', `${GATEWAY_PROVIDER_VARIABLE}=${provider} is not the provider of ${keyVar} for ${manifest.slug} (${route.provider})`);
        hosted = joinGateway({ url: clusterGateway, provider, token: secretEnv[injectAs!]!, log: options.log ?? SILENT, onBudgetExceeded, onThrottles });
      } else {
        hosted = await hostGateway({
          runId: options.runId,
          attempt: options.attempt ?? randomUUID(),
          provider: route.provider,
          key: secretEnv[injectAs!]!,
          upstream: baseUrl,
          // The token outlives the run by a margin (teardown, a slow last response), and is revoked when it ends.
          ttlSeconds: spec.maxRuntimeSeconds + 600,
          budget: spec.budget,
          log: options.log ?? SILENT,
          env: options.env,
          onBudgetExceeded,
          onThrottles,
        });
      }
      scrubber.add(hosted.token, secretEnv[injectAs!]!);
      secretEnv = { ...secretEnv, [injectAs!]: hosted.token };
      baseUrl = hosted.baseUrl;
      running = 'driver';
    }
    let resumeSessionId: string | undefined;
    for (let index = 0; index < spec.sessions; index++) {
      const invocation = adapter.invocation({
        model: spec.model,
        prompt: index === 0 ? spec.prompt : spec.continuePrompt,
        workdir: dirs.workspace,
        home: dirs.home,
        resumeSessionId,
        baseUrl,
        authMode: authMode ?? undefined,
      });
      const record = options.recordDir ? { dir: options.recordDir, name: `session-${index + 1}` } : undefined;
      running = 'session';
      const { summary, outcome: proc } = await runSession(ctx, adapter, invocation, binary, secretEnv, spec.maxRuntimeSeconds, record);
      running = 'driver';
      const result = summary.result;
      rawUsage.push(result.raw_usage ?? null);
      sessions.push({
        index,
        session_id: result.session_id ?? null,
        exit_code: proc.code,
        signal: proc.signal,
        tokens: result.tokens,
        reported_cost_usd: result.reported_cost_usd,
        is_error: result.is_error ?? null,
        duration_ms: proc.durationMs,
        counts: summary.counts,
      });
      if (proc.cancelled) {
        outcome = budgetHit ? 'budget_exceeded' : 'cancelled';
        message = budgetHit ? `the run reached its budget (${budgetHit.limit} ${budgetHit.max}): ${budgetHit.message}` : 'cancelled during the session';
        break;
      }
      if (proc.timedOut) {
        outcome = 'timed_out';
        message = `exceeded the maximum runtime of ${spec.maxRuntimeSeconds}s`;
        break;
      }
      if (proc.spawnError || proc.code !== 0 || result.is_error === true) {
        outcome = 'harness_failed';
        message = proc.code !== 0 ? `session ${index + 1} exited with ${proc.code ?? proc.signal}` : `session ${index + 1} reported an error`;
        break;
      }
      resumeSessionId = result.session_id ?? resumeSessionId;
    }
    if (outcome === 'succeeded') message = `${sessions.length} session(s) completed`;
  } catch (error) {
    const failure = asStageFailure(error, running);
    outcome = failure.kind === 'timeout' ? 'timed_out' : failure.kind === 'cancelled' ? 'cancelled' : 'infrastructure_failed';
    message = failure.message;
    // Another attempt may succeed only where nothing of the agent's has run yet: before the first session.
    retryable = failure.kind === 'infrastructure' && failure.transient && sessions.length === 0;
    emit({ type: 'error', timestamp: now(), message: failure.message, code: `${failure.stage}_failed` });
  } finally {
    if (hosted) {
      // What the provider reported on the wire, then the token refused from now on (a process the agent left
      // behind cannot spend any more).
      wire = await hosted.wire();
      await hosted.close().catch(() => undefined);
    }
    if (login) {
      // The rotated login back to the user's file, before the run HOME goes; then the next run may take it.
      try {
        if (ctx) await login.writeBack(ctx.dirs.home);
      } catch (error) {
        emit({ type: 'warning', timestamp: now(), message: `could not write the refreshed login back to ${login.login}: ${(error as Error).message}`, code: 'login_write_back_failed' });
      } finally {
        await login.release().catch(() => undefined);
      }
    }
    if (ctx) {
      try {
        await teardown(ctx, options.keep === true);
      } catch {
        // teardown already reported `teardown failed`; the run's outcome stands.
      }
    }
  }

  const tokens = runTokens(sessions, usageScope);
  // The harness's own numbers against the wire's: a disagreement beyond rounding is said, never resolved by guessing.
  for (const disagreement of usageDisagreements(tokens, wire?.tokens ?? null)) {
    emit({ type: 'warning', timestamp: now(), message: `usage: ${disagreement} (the wire's is what the provider reported to the model gateway)`, code: 'usage_disagrees' });
  }
  const reported = sumReportedCost(sessions);
  const cost = manifest
    ? priceRun({ model: spec.model, idFamily: manifest.model_ids, tokens, reportedCostUsd: reported, authMode: authMode ?? 'api-key', catalog: loadCatalog(settings.TCAB_MODEL_CATALOG) })
    : undefined;
  const last = sessions.at(-1);
  const result: RunResult = {
    run_id: options.runId,
    harness_slug: spec.harness,
    harness_version: harnessVersion,
    model: spec.model,
    canonical_model: cost?.canonical_model ?? null,
    outcome,
    message,
    auth_mode: authMode,
    sessions,
    session_ids: [...new Set(sessions.map((s) => s.session_id).filter((s): s is string => s !== null))],
    exit_code: last?.exit_code ?? null,
    stages: timings,
    tokens,
    raw_usage: (sessions.length === 0 ? null : sessions.length === 1 ? rawUsage[0] : rawUsage) as RunResult["raw_usage"],
    wire,
    reported_cost_usd: reported,
    actual_cost_usd: authMode === null ? null : (cost?.actual_cost_usd ?? null),
    comparable_cost_usd: cost?.comparable_cost_usd ?? null,
    catalog_version: cost?.catalog_version ?? null,
    cost_warnings: cost?.warnings ?? [],
    started_at: startedAt.toISOString(),
    finished_at: now(),
    event_count: seq,
    ...(options.attemptNumber ? { attempt: options.attemptNumber } : {}),
    ...(retryable ? { retryable: true } : {}),
  };
  const clean = scrubber.result(result);
  for (const sink of options.sinks) sink.result(clean);
  await Promise.all(options.sinks.map((s) => s.close()));
  return clean;
}
