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
import type { BudgetExceeded, GatewayRunUsage, GatewayTokenClaims, RunBudget, WireProtocol, WireSample } from '../shared/gateway.ts';
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
import type { GatewayMetrics, RequestOutcome } from './metrics.ts';
import { forward, writeAnswer } from './forward.ts';
import type { ForwardContext, Forwarded, GatewayLogger } from './forward.ts';
import type { UsageMeterFactory } from './tee.ts';
import { usageMeter } from './usage/index.ts';
import { controlRoutes } from './control.ts';
import type { Control } from './control.ts';
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
  const core = new GatewayCore(options);
  const server: Server = createServer((req, res) => core.serve(req, res));
  const host = options.host ?? '127.0.0.1';
  await listen(server, options.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  core.log.info({ url, providers: [...core.providers.keys()].filter((p) => core.keys.has(p)) }, 'gateway: listening');

  return {
    url,
    port,
    metrics: core.metrics.registry,
    baseUrl(name) {
      if (!core.providers.has(name)) throw new InvalidInputError('provider', `"${name}" is not in the gateway's table (${[...core.providers.keys()].join(', ')})`);
      return `${url}/p/${name}`;
    },
    mint(run, attempt, ttlSeconds, budget) {
      return core.mint(run, attempt, ttlSeconds, budget);
    },
    revoke(run, attempt) {
      core.revoke(run, attempt);
    },
    usage(run, attempt) {
      return core.usage(run, attempt);
    },
    async close() {
      core.control.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (core.ownDispatcher) await core.dispatcher.destroy();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Provider name -> real key: each must name a provider of the table and be non-empty. */
function keysFor(providers: ReadonlyMap<string, Provider>, given: Readonly<Record<string, string>>): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [name, key] of Object.entries(given)) {
    if (!providers.has(name)) throw new InvalidInputError(`keys.${name}`, `names no provider of the table (${[...providers.keys()].join(', ')})`);
    if (typeof key !== 'string' || key.length === 0) throw new InvalidInputError(`keys.${name}`, 'must be a non-empty key');
    keys.set(name, key);
  }
  return keys;
}

/** What the gateway holds (its tables, tokens and accounts) and the way of one request through it. */
class GatewayCore {
  readonly providers: ReadonlyMap<string, Provider>;
  readonly keys: Map<string, string>;
  readonly log: GatewayLogger;
  readonly metrics: GatewayMetrics;
  readonly ownDispatcher: boolean;
  readonly dispatcher: Dispatcher;
  readonly control: Control;
  private readonly options: GatewayOptions;
  /** The real keys: never sent back, never logged. */
  private readonly secrets: string[];
  private readonly signingKey: Uint8Array;
  private readonly clock: () => number;
  private readonly catalog: Catalog;
  private readonly maxLifetimeS: number;
  private readonly revoked: RevocationList;
  private readonly verified: VerifiedTokens;
  /** Per attempt (attemptKey), the latest expiry (ms) of the tokens `mint` gave it. */
  private readonly mintedUntil = new Map<string, number>();
  private readonly accounts = new Map<string, AccountEntry>();
  /** Attempts whose budget refusal was reported (onBudgetExceeded). */
  private readonly notified = new Set<string>();
  private lastSweep: number;
  private readonly throttleLog: ThrottleLog;
  private readonly context: ForwardContext;

  constructor(options: GatewayOptions) {
    this.options = options;
    this.providers = compileProviders(options.providers ?? DEFAULT_PROVIDERS);
    this.keys = keysFor(this.providers, options.keys);
    this.secrets = [...new Set(this.keys.values())];
    this.signingKey = signingKeyFrom(options.signingKey);
    const clock = options.clock ?? Date.now;
    this.clock = clock;
    this.log = options.log;
    this.catalog = options.catalog ?? loadCatalog();
    this.maxLifetimeS = options.maxTokenLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_S;
    this.metrics = gatewayMetrics(options.registry);
    this.ownDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ headersTimeout: options.upstreamTimeouts?.headersMs ?? 600_000, bodyTimeout: options.upstreamTimeouts?.bodyMs ?? 600_000 });
    this.revoked = new RevocationList();
    this.verified = new VerifiedTokens({ key: this.signingKey, maxLifetimeSeconds: this.maxLifetimeS, revoked: this.revoked });
    this.lastSweep = clock();
    // A new id per process: the dispatcher tells a restart (revocations forgotten) by it.
    this.throttleLog = new ThrottleLog(clock, undefined, randomUUID());
    this.context = { dispatcher: this.dispatcher, meter: options.meter ?? usageMeter, secrets: this.secrets, metrics: this.metrics, log: this.log, clock };
    this.control = controlRoutes({
      ...(options.adminToken !== undefined ? { adminToken: options.adminToken } : {}),
      check: (token, now) => this.verified.check(token, now),
      usage: (run, attempt) => this.usage(run, attempt) ?? emptyAccount(run, attempt, this.catalog.version),
      revoke: (run, attempt) => this.revoke(run, attempt),
      throttles: this.throttleLog,
      clock,
      log: this.log,
    });
  }

  mint(run: string, attempt: string, ttlSeconds: number, budget?: RunBudget): string {
    if (ttlSeconds > this.maxLifetimeS) throw new InvalidInputError('ttlSeconds', `${ttlSeconds} is longer than the gateway's longest token lifetime (${this.maxLifetimeS} s)`);
    const now = this.clock();
    const claims = claimsFor(run, attempt, ttlSeconds, now, budget);
    const token = mintToken(claims, this.signingKey);
    const key = attemptKey(run, attempt);
    this.mintedUntil.set(key, Math.max(this.mintedUntil.get(key) ?? 0, claims.exp * 1000));
    return token;
  }

  revoke(run: string, attempt: string): void {
    const now = this.clock();
    this.revoked.revoke(run, attempt, this.mintedUntil.get(attemptKey(run, attempt)) ?? now + this.maxLifetimeS * 1000);
    this.sweep(now);
  }

  usage(run: string, attempt: string): GatewayRunUsage | undefined {
    return this.accounts.get(attemptKey(run, attempt))?.usage;
  }

  /** The server's request listener: a request that throws is answered 500. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.handle(req, res);
    } catch (error) {
      this.log.error({ err: scrub(String(error), this.secrets) }, 'gateway: a request failed');
      this.answer(res, undefined, null, 'internal_error', 'tcab model gateway: the request could not be handled', 'internal_error');
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    const now = this.clock();
    this.sweep(now);
    if (req.url?.startsWith('/tcab/') && this.control.handle(req, res)) return;
    const target = parseTarget(req.url ?? '/', this.providers);
    if (!target.ok) {
      const kind = target.status === 400 ? 'bad_request' : 'not_found';
      this.log.info({ provider: target.provider?.name, status: target.status }, `gateway: refused a request: ${scrub(target.message, this.secrets)}`);
      return this.answer(res, target.provider, target.provider?.protocol ?? null, kind, target.message, kind);
    }
    const claims = this.authorize(req, res, target, now);
    if (!claims) return;
    const { run, attempt, budget } = claims;
    const { provider } = target;
    const realKey = this.keys.get(provider.name);
    if (realKey === undefined) {
      this.log.warn({ provider: provider.name, run }, 'gateway: refused a request: no key configured for the provider');
      return this.answer(res, provider, provider.protocol, 'not_found', `tcab model gateway: provider ${provider.name} is not configured on this gateway`, 'not_found');
    }
    const entry = this.accountOf(run, attempt);
    entry.lastMs = now;
    const exceeded = budgetDecision(budget, entry.usage);
    if (exceeded) return this.refuseOverBudget(res, provider, run, attempt, entry, exceeded);
    forward(this.context, req, res, target, realKey, t0, run, (forwarded) => this.account(target, run, attempt, forwarded));
  }

  /** The claims of the run token the request presents; undefined once it was answered 401. */
  private authorize(req: IncomingMessage, res: ServerResponse, target: Target, now: number): GatewayTokenClaims | undefined {
    const { provider } = target;
    const credential = presentedCredential(req.rawHeaders, target.queryKeys, provider.accepts);
    const check = credential.ok ? this.verified.check(credential.token, now) : undefined;
    if (check?.ok) return check.claims;
    const reason = check ? check.reason : credential.ok ? 'malformed' : credential.reason;
    this.log.info({ provider: provider.name, reason }, 'gateway: refused a request: no valid run token');
    this.answer(res, provider, provider.protocol, 'unauthorized', `tcab model gateway: this request presents no valid run token (${reason})`, 'unauthorized');
    return undefined;
  }

  /** Refuses a request over its run's budget; the attempt's first refusal goes to onBudgetExceeded. */
  private refuseOverBudget(res: ServerResponse, provider: Provider, run: string, attempt: string, entry: AccountEntry, exceeded: BudgetExceeded): void {
    entry.usage = addRefusal(entry.usage, exceeded);
    const key = attemptKey(run, attempt);
    this.log.info({ provider: provider.name, run, attempt, limit: exceeded.limit, used: exceeded.used, max: exceeded.max }, 'gateway: refused a request: the run budget is exceeded');
    this.answer(res, provider, provider.protocol, 'budget_exceeded', exceeded.message, 'budget_exceeded');
    this.control.changed(run, attempt);
    if (this.notified.has(key)) return;
    this.notified.add(key);
    this.metrics.budgetExceeded(exceeded.limit);
    try {
      this.options.onBudgetExceeded?.({ run, attempt, exceeded, account: entry.usage });
    } catch (error) {
      this.log.error({ run, attempt, err: scrub(String(error), this.secrets) }, 'gateway: the budget-exceeded callback failed');
    }
  }

  /** A forwarded request's answer, into its attempt's account. */
  private account(target: Target, run: string, attempt: string, { outcome, measured }: Forwarded): void {
    if (!measured) return;
    const { provider } = target;
    const { sample, status, overloaded } = measured;
    if (measured.problem) this.log.warn({ provider: provider.name, run, status, problem: measured.problem }, 'gateway: a response could not be metered');
    const entry = this.accountOf(run, attempt);
    entry.usage = addSample(entry.usage, { provider, sample, metered: target.protocol !== null, overloaded, retryAfterS: measured.retryAfterS }, this.catalog);
    entry.lastMs = this.clock();
    const throttled = isThrottle(status, overloaded);
    const throttleStatus = overloaded && status < 300 ? 529 : status;
    if (throttled) this.metrics.throttle(provider.name, sample.model, throttleStatus);
    this.throttleLog.observe({ provider: provider.name, model: sample.model, status: throttleStatus, throttled, retryAfterS: measured.retryAfterS });
    this.control.changed(run, attempt);
    if (sample.tokens) for (const cls of TOKEN_CLASSES) if (cls !== 'reasoning') this.metrics.tokens(provider.name, cls, sample.tokens[cls] ?? 0);
    this.log.debug({ provider: provider.name, run, attempt, status, model: sample.model, tokens: sample.tokens, outcome }, 'gateway: response measured');
    try {
      this.options.onSample?.({ run, attempt, provider: provider.name, sample, account: entry.usage });
    } catch (error) {
      this.log.error({ run, attempt, err: scrub(String(error), this.secrets) }, 'gateway: the sample callback failed');
    }
  }

  private answer(res: ServerResponse, provider: Provider | undefined, protocol: WireProtocol | null, kind: GatewayErrorKind, message: string, outcome: RequestOutcome): void {
    this.metrics.request(provider?.name ?? '(none)', outcome);
    writeAnswer(res, gatewayError(protocol, kind, scrub(message, this.secrets)));
  }

  private accountOf(run: string, attempt: string): AccountEntry {
    const key = attemptKey(run, attempt);
    let entry = this.accounts.get(key);
    if (!entry) {
      entry = { usage: emptyAccount(run, attempt, this.catalog.version), lastMs: this.clock() };
      this.accounts.set(key, entry);
    }
    return entry;
  }

  /** At most once a SWEEP_EVERY_MS: forgets expired revocations and mints, and accounts idle past the longest token lifetime. */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.revoked.sweep(now);
    for (const [key, until] of this.mintedUntil) if (until <= now) this.mintedUntil.delete(key);
    for (const [key, entry] of this.accounts) {
      if (entry.lastMs + this.maxLifetimeS * 1000 <= now) {
        this.accounts.delete(key);
        this.notified.delete(key);
      }
    }
  }
}
