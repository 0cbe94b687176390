// The dispatcher's reader of provider back-pressure (issue 34): GET <gateway>/tcab/throttles every few seconds with
// the gateway's admin token, validated (ThrottleReport), into the ThrottleBook the claim pass asks. Only when the
// install runs a gateway. A gateway that is down, slow, or answers something else is tolerated: the failure is logged
// once (and its end once), and the book holds nothing once its last report is older than its stale bound
// (throttle.ts STALE_MS), so an outage never stalls the queue.
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { GATEWAY_CONTROL, GATEWAY_ENV, ThrottleReport } from '../../shared/gateway.ts';
import type { Logger } from '../../shared/log.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import type { Clock } from '../controller/work-queue.ts';
import { keyOf } from './throttle.ts';
import type { ThrottleBook, ThrottleHold } from './throttle.ts';

/** Between two polls. */
export const POLL_INTERVAL_MS = 5_000;
/** Longest wait for the gateway's answer (headers and body each). */
export const POLL_TIMEOUT_MS = 3_000;
/** Largest report read (the gateway keeps at most 500 rows: far less). */
const MAX_REPORT_BYTES = 1 << 20;

/** Where the gateway is and its admin token (read at each poll: the Secret may be rotated). */
export interface ThrottleGateway {
  url: string;
  adminToken: () => Promise<string>;
}

/**
 * The gateway as the dispatcher's settings name it (TCAB_GATEWAY_URL, TCAB_GATEWAY_ADMIN_TOKEN_FILE), read
 * defensively: settings without them (or with only one) give undefined, and nothing is polled.
 */
export function throttleGatewayOf(settings: object, read: (path: string) => Promise<string> = (path) => readFile(path, 'utf8')): ThrottleGateway | undefined {
  const fields = settings as Record<string, unknown>;
  const url = fields.TCAB_GATEWAY_URL;
  const tokenFile = fields[GATEWAY_ENV.adminTokenFile];
  if (typeof url !== 'string' || url === '' || typeof tokenFile !== 'string' || tokenFile === '') return undefined;
  return { url: url.replace(/\/+$/, ''), adminToken: async () => (await read(tokenFile)).trim() };
}

export interface ThrottlePollerOptions {
  gateway: ThrottleGateway;
  book: ThrottleBook;
  clock: Clock;
  log: Logger;
  intervalMs?: number;
  timeoutMs?: number;
  /** The holds changed (one began, ended early, or all went with stale data): the claim pass should look again. */
  onChange?: () => void;
  /**
   * The gateway restarted (its report's boot_id changed): it forgot its revocations, which the dispatcher sends
   * again. Not called for the first report this poller reads.
   */
  onGatewayRestart?: () => void;
  /** Holds a report started (the holds counter). */
  onHoldsStarted?: (holds: ThrottleHold[]) => void;
  /** undici dispatcher (tests); default the global one. */
  dispatcher?: Dispatcher;
}

const signature = (holds: readonly ThrottleHold[]) => holds.map((h) => `${keyOf(h.provider, h.model)}@${h.heldUntilMs}`).join('\n');

export class ThrottlePoller {
  private readonly options: ThrottlePollerOptions;
  private timer: unknown;
  private stopped = true;
  /** The failure being logged: a new one is logged once, its end once. */
  private failing: string | undefined;
  private lastSignature = '';
  private bootId: string | undefined;
  private polling: Promise<boolean> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(options: ThrottlePollerOptions) {
    this.options = options;
  }

  get book(): ThrottleBook {
    return this.options.book;
  }

  /** Also told when the holds changed (the console's harness rows); returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Polls now and every interval until stop(); resolves when the first poll is over and the next one scheduled. */
  start(): Promise<void> {
    if (!this.stopped) return Promise.resolve();
    this.stopped = false;
    return this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  private async tick(): Promise<void> {
    await this.pollOnce();
    if (!this.stopped) this.timer = this.options.clock.setTimeout(() => void this.tick(), this.options.intervalMs ?? POLL_INTERVAL_MS);
  }

  /** One poll: true when a valid report was read into the book. Never throws. */
  pollOnce(): Promise<boolean> {
    this.polling = this.poll().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async poll(): Promise<boolean> {
    const { gateway, book, clock } = this.options;
    let problem: string | undefined;
    try {
      const report = await this.fetchReport(gateway);
      if (typeof report === 'string') problem = report;
      else {
        if (report.boot_id !== undefined) {
          if (this.bootId !== undefined && this.bootId !== report.boot_id) this.options.onGatewayRestart?.();
          this.bootId = report.boot_id;
        }
        const started = book.observe(report, clock.now());
        if (started.length > 0) this.options.onHoldsStarted?.(started);
      }
    } catch (error) {
      problem = `unreachable: ${(error as Error).message}`;
    }
    this.noteProblem(problem);
    const now = signature(book.holds(clock.now()));
    if (now !== this.lastSignature) {
      this.lastSignature = now;
      this.options.onChange?.();
      for (const listener of this.listeners) listener();
    }
    return problem === undefined;
  }

  private noteProblem(problem: string | undefined): void {
    const { log, gateway } = this.options;
    if (problem !== undefined && this.failing === undefined) log.warn({ gateway: gateway.url, problem }, 'reading the model gateway\'s throttles failed; runs are not held on stale data');
    if (problem === undefined && this.failing !== undefined) log.info({ gateway: gateway.url }, 'reading the model gateway\'s throttles works again');
    this.failing = problem;
  }

  /** The report, or what was wrong with the answer. */
  private async fetchReport(gateway: ThrottleGateway): Promise<ThrottleReport | string> {
    const timeout = this.options.timeoutMs ?? POLL_TIMEOUT_MS;
    const token = await gateway.adminToken();
    const { statusCode, body } = await request(`${gateway.url}${GATEWAY_CONTROL.throttles}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      headersTimeout: timeout,
      bodyTimeout: timeout,
      ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
    });
    if (statusCode !== 200) {
      await body.dump();
      return `HTTP ${statusCode}`;
    }
    const text = await body.text();
    if (text.length > MAX_REPORT_BYTES) return `a report of ${text.length} bytes (over ${MAX_REPORT_BYTES})`;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return 'not JSON';
    }
    const parsed = ThrottleReport.safeParse(json);
    return parsed.success ? parsed.data : `not a ThrottleReport: ${formatIssues(parsed.error)}`;
  }
}
