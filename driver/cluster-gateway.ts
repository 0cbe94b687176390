// The cluster's model gateway, from a driver Pod (issue 34): the dispatcher put the run's token in the harness's key
// variable and the gateway's URL and provider in TCAB_GATEWAY_URL / TCAB_GATEWAY_PROVIDER; the key itself is only
// in the gateway's Pod. The driver gives the harness `<gateway>/p/<provider>` as its base URL, watches the run's
// account (its budget refusal ends the run budget_exceeded; each new throttle is a warning) and, at the end, reads
// the account for the result's `wire`. The dispatcher revokes the token when the Run is final.
import { Agent, request } from 'undici';
import { GATEWAY_CONTROL, GatewayRunUsage, WatchAnswer } from '../shared/gateway.ts';
import type { BudgetExceeded, GatewayThrottle, WireAccount } from '../shared/gateway.ts';
import type { GatewayLogger } from '../gateway/index.ts';
import { wireAccountOf } from './gateway-host.ts';
import type { HostedGateway } from './gateway-host.ts';

/** One watch's longest wait (s): below the gateway's limit (control.ts MAX_WATCH_S). */
const WATCH_S = 50;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

export interface JoinGatewayInput {
  /** TCAB_GATEWAY_URL: `http://<service>:<port>`. */
  url: string;
  provider: string;
  /** The run's token (what the harness presents). */
  token: string;
  log: GatewayLogger;
  onBudgetExceeded: (exceeded: BudgetExceeded) => void;
  /** The run's throttles as the gateway counts them, each time they grow. */
  onThrottles: (throttles: readonly GatewayThrottle[]) => void;
}

export function joinGateway(input: JoinGatewayInput): HostedGateway {
  const base = new URL(input.url);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`TCAB_GATEWAY_URL must be an http(s) URL, got ${base.protocol}`);
  const root = input.url.replace(/\/+$/, '');
  // Its own connections, never a proxy: the gateway is in the cluster (the Pod's NO_PROXY names it too).
  const agent = new Agent({ headersTimeout: (WATCH_S + 30) * 1000, bodyTimeout: (WATCH_S + 30) * 1000 });
  const stop = new AbortController();
  const headers = { authorization: `Bearer ${input.token}` };
  let throttled = 0;
  let exceeded = false;

  const get = async (path: string) => {
    const res = await request(`${root}${path}`, { dispatcher: agent, headers, signal: stop.signal });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path.split('?')[0]} answered ${res.statusCode}`);
    return JSON.parse(text) as unknown;
  };

  const watch = async () => {
    let delay = RETRY_MIN_MS;
    while (!stop.signal.aborted && !exceeded) {
      try {
        const answer = WatchAnswer.parse(await get(`${GATEWAY_CONTROL.watch}?wait=${WATCH_S}&throttled=${throttled}`));
        delay = RETRY_MIN_MS;
        const count = answer.throttles.reduce((n, t) => n + t.count, 0);
        if (count > throttled) {
          throttled = count;
          input.onThrottles(answer.throttles);
        }
        if (answer.exceeded) {
          exceeded = true;
          input.onBudgetExceeded(answer.exceeded);
        }
      } catch (error) {
        if (stop.signal.aborted) return;
        input.log.warn({ err: (error as Error).message, retryInMs: delay }, 'gateway: watching the run\'s account failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  };
  const watching = watch();

  return {
    baseUrl: `${root}/p/${input.provider}`,
    token: input.token,
    wire: async (): Promise<WireAccount | null> => {
      try {
        return wireAccountOf(GatewayRunUsage.parse(await get(GATEWAY_CONTROL.usage)));
      } catch (error) {
        // Unknown is said, never guessed: the result carries no wire account.
        input.log.warn({ err: (error as Error).message }, 'gateway: the run\'s wire account could not be read');
        return null;
      }
    },
    close: async () => {
      stop.abort();
      await watching;
      await agent.close();
    },
  };
}
