// The model gateway's HTTP server (issue 34): the thin shell around the pure parts. Per request: read the target
// (request.ts), check the presented token (token.ts), decide the budget (account.ts), then forward it (forward.ts:
// undici, the token swapped for the provider's real key, the response streamed through and metered). The measured
// sample goes to the run attempt's account when the response ends.
//
// A request is checked against the budget when it arrives; one in flight when the limit is passed completes and is
// accounted (usage is known only when its response ends), and the next request is refused. Concurrent requests of
// one run can therefore overshoot a limit by what those in flight use.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { Registry } from 'prom-client';
import type { BudgetExceeded, GatewayRunUsage, RunBudget, WireProtocol, WireSample } from '../shared/gateway.ts';
import { TOKEN_CLASSES } from '../shared/usage.ts';
import type { Catalog } from '../shared/catalog/schema.ts';
import { loadCatalog } from '../shared/catalog/load.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { attemptKey, claimsFor, mintToken, RevocationList, signingKeyFrom, VerifiedTokens } from './token.ts';
import { compileProviders, DEFAULT_PROVIDERS } from './providers.ts';
import type { Provider, ProviderConfig } from './providers.ts';
import { parseTarget, presentedCredential, scrub } from './request.ts';
import type { Target } from './request.ts';
import { gatewayError } from './errors.ts';
import type { GatewayErrorKind } from './errors.ts';
import { addRefusal, addSample, budgetDecision, emptyAccount, isThrottle } from './account.ts';
import { gatewayMetrics } from './metrics.ts';
import type { RequestOutcome } from './metrics.ts';
import { forward, writeAnswer } from './forward.ts';
import type { Forwarded, GatewayLogger } from './forward.ts';
import type { UsageMeterFactory } from './tee.ts';
import { usageMeter } from './usage/index.ts';
import { controlRoutes } from './control.ts';
import { ThrottleLog } from './throttle-log.ts';

export type { GatewayLogger };

export interface GatewayOptions {
  /** Address to listen on; default 127.0.0.1 (a workstation's driver). A chart's Deployment passes 0.0.0.0. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The provider table; default DEFAULT_PROVIDERS (providers.ts). */
  providers?: readonly ProviderConfig[];
  /** Provider name -> the real key. A provider without one answers 404 (in its shape) to every request. */
  keys: Readonly<Record<string, string>>;
  /** At least 32 random bytes (or their base64): signs and verifies the per-run tokens. */
  signingKey: Uint8Array | string;
  /** Now, in ms since the epoch; default Date.now. Token expiry and retry-after dates read it. */
  clock?: () => number;
  log: GatewayLogger;
  /** Model catalogue for cost budgets; default the bundled one. */
  catalog?: Catalog;
  /** Prometheus registry the gateway's metrics are registered in; default a new one (`gateway.metrics`). */
  registry?: Registry;
  /** Longest token lifetime minted or accepted (s); revocations and idle accounts are forgotten after it. Default 7 days. */
  maxTokenLifetimeSeconds?: number;
  /** Upstream timeouts (ms): for the response head, and between body chunks. Default 10 minutes each. */
  upstreamTimeouts?: { headersMs?: number; bodyMs?: number };
  /** Each measured response, after it was added to its account. */
  onSample?: (event: SampleEvent) => void;
  /** A run attempt's first request refused for its budget: the host ends the run with outcome budget_exceeded. */
  onBudgetExceeded?: (event: BudgetExceededEvent) => void;
  /** The usage meter; default gateway/usage's. */
  meter?: UsageMeterFactory;
  /** The undici dispatcher requests go through; default an Agent of the gateway's own (closed with it). */
  dispatcher?: Dispatcher;
  /** Opens the admin control routes (revoke, throttles: control.ts) to this bearer token; without it they answer 404. */
  adminToken?: string;
}

export interface SampleEvent {
  run: string;
  attempt: string;
  provider: string;
  sample: WireSample;
  account: GatewayRunUsage;
}

export interface BudgetExceededEvent {
  run: string;
  attempt: string;
  exceeded: BudgetExceeded;
  account: GatewayRunUsage;
}

export interface Gateway {
  /** `http://host:port` (IPv6 hosts bracketed). */
  readonly url: string;
  readonly port: number;
  /** What a harness's base URL variable gets for a provider: `<url>/p/<provider>` (append `/v1` where its SDK expects it). */
  baseUrl(provider: string): string;
  /** A token for a run attempt, living ttlSeconds (at most maxTokenLifetimeSeconds), with the run's budget signed in. */
  mint(run: string, attempt: string, ttlSeconds: number, budget?: RunBudget): string;
  /**
   * Refuses every token of the attempt from now on (requests in flight complete). The refusal is kept until the
   * latest expiry of the attempt's tokens minted by `mint`, else for maxTokenLifetimeSeconds (tokens minted
   * elsewhere with the same key: no token lives longer than that).
   */
  revoke(run: string, attempt: string): void;
  /** The attempt's account as measured so far (undefined before its first request). */
  usage(run: string, attempt: string): GatewayRunUsage | undefined;
  /** The registry holding the gateway's metrics (serve it on /metrics). */
  readonly metrics: Registry;
  close(): Promise<void>;
}

const DEFAULT_MAX_LIFETIME_S = 7 * 24 * 3600;
const SWEEP_EVERY_MS = 60_000;

interface AccountEntry {
  usage: GatewayRunUsage;
  lastMs: number;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const providers = compileProviders(options.providers ?? DEFAULT_PROVIDERS);
  const keys = new Map<string, string>();
  for (const [name, key] of Object.entries(options.keys)) {
    if (!providers.has(name)) throw new InvalidInputError(`keys.${name}`, `names no provider of the table (${[...providers.keys()].join(', ')})`);
    if (typeof key !== 'string' || key.length === 0) throw new InvalidInputError(`keys.${name}`, 'must be a non-empty key');
    keys.set(name, key);
  }
  const secrets = [...new Set(keys.values())];
  const signingKey = signingKeyFrom(options.signingKey);
  const clock = options.clock ?? Date.now;
  const log = options.log;
  const catalog = options.catalog ?? loadCatalog();
  const maxLifetimeS = options.maxTokenLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_S;
  const metrics = gatewayMetrics(options.registry);
  const meter = options.meter ?? usageMeter;
  const ownDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? new Agent({ headersTimeout: options.upstreamTimeouts?.headersMs ?? 600_000, bodyTimeout: options.upstreamTimeouts?.bodyMs ?? 600_000 });
  const revoked = new RevocationList();
  const verified = new VerifiedTokens({ key: signingKey, maxLifetimeSeconds: maxLifetimeS, revoked });
  const mintedUntil = new Map<string, number>();
  const accounts = new Map<string, AccountEntry>();
  const notified = new Set<string>();
  let lastSweep = clock();
  // A new id per process: the dispatcher tells a restart (revocations forgotten) by it.
  const throttleLog = new ThrottleLog(clock, undefined, randomUUID());

  const sweep = (now: number) => {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    revoked.sweep(now);
    for (const [key, until] of mintedUntil) if (until <= now) mintedUntil.delete(key);
    for (const [key, entry] of accounts) {
      if (entry.lastMs + maxLifetimeS * 1000 <= now) {
        accounts.delete(key);
        notified.delete(key);
      }
    }
  };

  const accountOf = (run: string, attempt: string): AccountEntry => {
    const key = attemptKey(run, attempt);
    let entry = accounts.get(key);
    if (!entry) {
      entry = { usage: emptyAccount(run, attempt, catalog.version), lastMs: clock() };
      accounts.set(key, entry);
    }
    return entry;
  };

  const answer = (res: ServerResponse, provider: Provider | undefined, protocol: WireProtocol | null, kind: GatewayErrorKind, message: string, outcome: RequestOutcome) => {
    metrics.request(provider?.name ?? '(none)', outcome);
    writeAnswer(res, gatewayError(protocol, kind, scrub(message, secrets)));
  };

  const context = { dispatcher, meter, secrets, metrics, log, clock };

  const revokeAttempt = (run: string, attempt: string) => {
    const now = clock();
    revoked.revoke(run, attempt, mintedUntil.get(attemptKey(run, attempt)) ?? now + maxLifetimeS * 1000);
    sweep(now);
  };
  const control = controlRoutes({
    ...(options.adminToken !== undefined ? { adminToken: options.adminToken } : {}),
    check: (token, now) => verified.check(token, now),
    usage: (run, attempt) => accounts.get(attemptKey(run, attempt))?.usage ?? emptyAccount(run, attempt, catalog.version),
    revoke: revokeAttempt,
    throttles: throttleLog,
    clock,
    log,
  });

  /** A forwarded request's answer, into its attempt's account. */
  const account = (target: Target, run: string, attempt: string, { outcome, measured }: Forwarded) => {
    if (!measured) return;
    const { provider } = target;
    const { sample, status, overloaded } = measured;
    if (measured.problem) log.warn({ provider: provider.name, run, status, problem: measured.problem }, 'gateway: a response could not be metered');
    const entry = accountOf(run, attempt);
    entry.usage = addSample(entry.usage, { provider, sample, metered: target.protocol !== null, overloaded, retryAfterS: measured.retryAfterS }, catalog);
    entry.lastMs = clock();
    const throttled = isThrottle(status, overloaded);
    const throttleStatus = overloaded && status < 300 ? 529 : status;
    if (throttled) metrics.throttle(provider.name, sample.model, throttleStatus);
    throttleLog.observe({ provider: provider.name, model: sample.model, status: throttleStatus, throttled, retryAfterS: measured.retryAfterS });
    control.changed(run, attempt);
    if (sample.tokens) for (const cls of TOKEN_CLASSES) if (cls !== 'reasoning') metrics.tokens(provider.name, cls, sample.tokens[cls] ?? 0);
    log.debug({ provider: provider.name, run, attempt, status, model: sample.model, tokens: sample.tokens, outcome }, 'gateway: response measured');
    try {
      options.onSample?.({ run, attempt, provider: provider.name, sample, account: entry.usage });
    } catch (error) {
      log.error({ run, attempt, err: scrub(String(error), secrets) }, 'gateway: the sample callback failed');
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const t0 = performance.now();
    const now = clock();
    sweep(now);
    if (req.url?.startsWith('/tcab/') && control.handle(req, res)) return;
    const target = parseTarget(req.url ?? '/', providers);
    if (!target.ok) {
      const kind = target.status === 400 ? 'bad_request' : 'not_found';
      log.info({ provider: target.provider?.name, status: target.status }, `gateway: refused a request: ${scrub(target.message, secrets)}`);
      return answer(res, target.provider, target.provider?.protocol ?? null, kind, target.message, kind);
    }
    const { provider } = target;
    const credential = presentedCredential(req.rawHeaders, target.queryKeys, provider.accepts);
    const check = credential.ok ? verified.check(credential.token, now) : undefined;
    if (!check?.ok) {
      const reason = check ? check.reason : credential.ok ? 'malformed' : credential.reason;
      log.info({ provider: provider.name, reason }, 'gateway: refused a request: no valid run token');
      return answer(res, provider, provider.protocol, 'unauthorized', `tcab model gateway: this request presents no valid run token (${reason})`, 'unauthorized');
    }
    const { run, attempt, budget } = check.claims;
    const realKey = keys.get(provider.name);
    if (realKey === undefined) {
      log.warn({ provider: provider.name, run }, 'gateway: refused a request: no key configured for the provider');
      return answer(res, provider, provider.protocol, 'not_found', `tcab model gateway: provider ${provider.name} is not configured on this gateway`, 'not_found');
    }
    const entry = accountOf(run, attempt);
    entry.lastMs = now;
    const exceeded = budgetDecision(budget, entry.usage);
    if (exceeded) {
      entry.usage = addRefusal(entry.usage, exceeded);
      const key = attemptKey(run, attempt);
      log.info({ provider: provider.name, run, attempt, limit: exceeded.limit, used: exceeded.used, max: exceeded.max }, 'gateway: refused a request: the run budget is exceeded');
      answer(res, provider, provider.protocol, 'budget_exceeded', exceeded.message, 'budget_exceeded');
      control.changed(run, attempt);
      if (!notified.has(key)) {
        notified.add(key);
        metrics.budgetExceeded(exceeded.limit);
        try {
          options.onBudgetExceeded?.({ run, attempt, exceeded, account: entry.usage });
        } catch (error) {
          log.error({ run, attempt, err: scrub(String(error), secrets) }, 'gateway: the budget-exceeded callback failed');
        }
      }
      return;
    }
    forward(context, req, res, target, realKey, t0, run, (forwarded) => account(target, run, attempt, forwarded));
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      log.error({ err: scrub(String(error), secrets) }, 'gateway: a request failed');
      answer(res, undefined, null, 'internal_error', 'tcab model gateway: the request could not be handled', 'internal_error');
    }
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url, providers: [...providers.keys()].filter((p) => keys.has(p)) }, 'gateway: listening');

  return {
    url,
    port,
    metrics: metrics.registry,
    baseUrl(name) {
      if (!providers.has(name)) throw new InvalidInputError('provider', `"${name}" is not in the gateway's table (${[...providers.keys()].join(', ')})`);
      return `${url}/p/${name}`;
    },
    mint(run, attempt, ttlSeconds, budget) {
      if (ttlSeconds > maxLifetimeS) throw new InvalidInputError('ttlSeconds', `${ttlSeconds} is longer than the gateway's longest token lifetime (${maxLifetimeS} s)`);
      const now = clock();
      const claims = claimsFor(run, attempt, ttlSeconds, now, budget);
      const token = mintToken(claims, signingKey);
      const key = attemptKey(run, attempt);
      mintedUntil.set(key, Math.max(mintedUntil.get(key) ?? 0, claims.exp * 1000));
      return token;
    },
    revoke: revokeAttempt,
    usage(run, attempt) {
      return accounts.get(attemptKey(run, attempt))?.usage;
    },
    async close() {
      control.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownDispatcher) await dispatcher.destroy();
    },
  };
}
