// The gateway's control routes (/tcab/..., shared/gateway.ts GATEWAY_CONTROL) for the cluster host, where the
// gateway is another Pod than the run's driver: the driver reads its run's account and watches for the budget
// refusal and throttles with the run's own token (the one its harness presents); the dispatcher revokes a final
// run's tokens and reads the provider back-pressure with the admin token. Answers are JSON; nothing here ever
// writes a token or a key into a response or a log line.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerOf, tokenMatches } from '../shared/bearer-token.ts';
import { GATEWAY_CONTROL, RevokeRequest } from '../shared/gateway.ts';
import type { GatewayRunUsage, WatchAnswer } from '../shared/gateway.ts';
import type { TokenCheck } from './token.ts';
import type { ThrottleLog } from './throttle-log.ts';
import type { GatewayLogger } from './forward.ts';

/** Longest a watch is held open (s): a driver asks again after it. */
export const MAX_WATCH_S = 60;
const MAX_BODY_BYTES = 4096;

export interface ControlDeps {
  /** Without one, the admin routes answer 404 (a workstation's gateway has no dispatcher). */
  adminToken?: string;
  check: (token: string, now: number) => TokenCheck;
  usage: (run: string, attempt: string) => GatewayRunUsage;
  revoke: (run: string, attempt: string) => void;
  throttles: ThrottleLog;
  clock: () => number;
  log: GatewayLogger;
}

export interface Control {
  /** Handles a /tcab/ request; false when the path is not a control route. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The attempt's account changed (a sample, a refusal): its watchers look again. */
  changed(run: string, attempt: string): void;
  /** Answers every open watch (the gateway is closing). */
  close(): void;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const bearer = (req: IncomingMessage): string | undefined => bearerOf(req.headers.authorization);

function watchAnswer(usage: GatewayRunUsage): WatchAnswer {
  return { exceeded: usage.budget_exceeded, throttles: usage.throttles };
}

const throttledCount = (usage: GatewayRunUsage) => usage.throttles.reduce((n, t) => n + t.count, 0);

/** An open watch: `look` answers if there is news, `end` answers now. */
interface Watcher {
  look(): void;
  end(): void;
}

/** Open watches by attempt (keyOf). */
type Watchers = Map<string, Set<Watcher>>;

const keyOf = (run: string, attempt: string) => JSON.stringify([run, attempt]);

export function controlRoutes(deps: ControlDeps): Control {
  const watchers: Watchers = new Map();
  return {
    handle(req, res) {
      return route(deps, watchers, req, res);
    },
    changed(run, attempt) {
      const set = watchers.get(keyOf(run, attempt));
      if (set) for (const watcher of [...set]) watcher.look();
    },
    close() {
      for (const set of [...watchers.values()]) for (const watcher of [...set]) watcher.end();
    },
  };
}

function route(deps: ControlDeps, watchers: Watchers, req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? '/', 'http://gateway');
  const method = req.method ?? 'GET';
  const only = (allowed: string) => {
    if (method === allowed) return true;
    res.setHeader('allow', allowed);
    json(res, 405, { error: `${url.pathname} takes ${allowed}` });
    return false;
  };
  switch (url.pathname) {
    case GATEWAY_CONTROL.healthz:
      if (only('GET')) json(res, 200, { ok: true });
      return true;
    case GATEWAY_CONTROL.usage: {
      if (!only('GET')) return true;
      const who = runOf(deps, req, res);
      if (who) json(res, 200, deps.usage(who.run, who.attempt));
      return true;
    }
    case GATEWAY_CONTROL.watch:
      if (only('GET')) watch(deps, watchers, req, res, url.searchParams);
      return true;
    case GATEWAY_CONTROL.revoke:
      if (only('POST')) revoke(deps, req, res);
      return true;
    case GATEWAY_CONTROL.throttles:
      if (only('GET') && admin(deps, req, res)) json(res, 200, deps.throttles.report());
      return true;
    default:
      return false;
  }
}

/** The run attempt whose token the request presents; undefined once it answered 401. */
function runOf(deps: ControlDeps, req: IncomingMessage, res: ServerResponse): { run: string; attempt: string } | undefined {
  const token = bearer(req);
  const check = token ? deps.check(token, deps.clock()) : undefined;
  if (check?.ok) return check.claims;
  deps.log.info({ route: req.url?.split('?')[0], reason: check ? check.reason : 'missing' }, 'gateway: refused a control request: no valid run token');
  json(res, 401, { error: 'this request presents no valid run token' });
  return undefined;
}

/** Whether the request presents the admin token; false once it answered 404 or 401. */
function admin(deps: ControlDeps, req: IncomingMessage, res: ServerResponse): boolean {
  if (deps.adminToken === undefined) {
    json(res, 404, { error: 'this gateway has no admin routes' });
    return false;
  }
  if (tokenMatches(bearer(req), deps.adminToken)) return true;
  deps.log.warn({ route: req.url?.split('?')[0] }, 'gateway: refused an admin request: wrong or missing admin token');
  json(res, 401, { error: 'this request presents no valid admin token' });
  return false;
}

function watch(deps: ControlDeps, watchers: Watchers, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
  const who = runOf(deps, req, res);
  if (!who) return;
  const wait = Number(query.get('wait') ?? '0');
  const seen = Number(query.get('throttled') ?? '0');
  if (!Number.isFinite(wait) || wait < 0 || wait > MAX_WATCH_S) return json(res, 400, { error: `wait must be 0..${MAX_WATCH_S} seconds` });
  if (!Number.isInteger(seen) || seen < 0) return json(res, 400, { error: 'throttled must be a count' });
  const news = () => {
    const usage = deps.usage(who.run, who.attempt);
    return usage.budget_exceeded !== null || throttledCount(usage) > seen ? usage : undefined;
  };
  const now = news();
  if (now || wait === 0) return json(res, 200, watchAnswer(now ?? deps.usage(who.run, who.attempt)));
  const answer = () => watchAnswer(deps.usage(who.run, who.attempt));
  holdWatch(watchers, keyOf(who.run, who.attempt), res, wait, () => news() !== undefined, answer);
}

/** Keeps a watch open until its attempt has news, `waitS` pass, the client leaves or the gateway closes. */
function holdWatch(watchers: Watchers, key: string, res: ServerResponse, waitS: number, hasNews: () => boolean, answer: () => WatchAnswer): void {
  const set = watchers.get(key) ?? new Set();
  watchers.set(key, set);
  const forget = () => {
    clearTimeout(timer);
    set.delete(watcher);
    if (set.size === 0 && watchers.get(key) === set) watchers.delete(key);
  };
  const end = () => {
    forget();
    if (!res.writableEnded) json(res, 200, answer());
  };
  const watcher: Watcher = { look: () => (hasNews() ? end() : undefined), end };
  set.add(watcher);
  const timer = setTimeout(end, waitS * 1000);
  res.on('close', forget);
}

function revoke(deps: ControlDeps, req: IncomingMessage, res: ServerResponse): void {
  if (!admin(deps, req, res)) return;
  readSmallBody(req, res, (text) => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return json(res, 400, { error: 'the body is not JSON' });
    }
    const parsed = RevokeRequest.safeParse(body);
    if (!parsed.success) return json(res, 400, { error: `the body is not a revoke request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}` });
    deps.revoke(parsed.data.run, parsed.data.attempt);
    deps.log.info({ run: parsed.data.run, attempt: parsed.data.attempt }, 'gateway: revoked a run attempt\'s tokens');
    json(res, 204, undefined);
  });
}

/** Reads a body of up to MAX_BODY_BYTES (a longer one is answered 413) and hands it on if nothing answered yet. */
function readSmallBody(req: IncomingMessage, res: ServerResponse, then: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      json(res, 413, { error: `the body is over ${MAX_BODY_BYTES} bytes` });
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (res.writableEnded) return;
    then(Buffer.concat(chunks).toString('utf8'));
  });
}
