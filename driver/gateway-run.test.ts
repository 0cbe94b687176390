// executeRun with the model gateway in the driver's process (issue 34), end to end with real processes: gg (the
// built-in harness, as the run user: uid 1000 when the suite runs as root, as in CI) against the real stub model on
// loopback. The stub stands for the provider: it receives the real key, the harness only a per-run token; the
// gateway measures what the stub served; a budget ends the run budget_exceeded. The agent (the stub's script) runs
// shell commands that look for the key where an agent would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from './run.ts';
import type { DriverOptions } from './run.ts';
import { MemorySink } from './sinks/sink.ts';
import { resolveRunUser } from './run-user.ts';
import { startStubModelServer } from './stub-models/index.ts';
import type { StubModelServer } from './stub-models/index.ts';
import { toolResults } from './stub-models/tool-results.ts';
import { RunResult, RunSpec } from '../shared/run.ts';
import type { RunSpecInput } from '../shared/run.ts';
import { HarnessEvent } from '../shared/events.ts';
import { OUTCOME_EXIT } from '../shared/outcome-exit.ts';
import { startGateway, TOKEN_PREFIX } from '../gateway/index.ts';
import { providerConfigs } from '../gateway/providers.ts';

/** The provider's key, as the stub (the provider here) must receive it: an obviously fake one. */
const REAL_KEY = 'sk-ant-fake-gateway-real-key-7731';
const USAGE = { input: 120, output: 30, cache_read: 40, cache_write: 10, reasoning: 0 };
/** What the agent runs: where it would look for the key (its environment, the driver's through /proc). */
const LOOK = [
  'printenv TCAB_GG_API_KEY | cut -c1-7 | sed "s/^/key.prefix=/"',
  // A part of the key (the agent does not know it; the whole key must appear nowhere in the run's record).
  `if env | grep -q "${REAL_KEY.slice(0, 24)}"; then echo env=has-key; else echo env=clean; fi`,
  `if grep -q "${REAL_KEY.slice(0, 24)}" /proc/$PPID/environ 2>/dev/null; then echo parent=has-key; else echo parent=clean; fi`,
].join('; ');

let base: string;
let stub: StubModelServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-gateway-run-'));
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: LOOK } } }, { text: 'Looked.' }], usage: USAGE } });
});
afterEach(() => {
  stub.requests.length = 0;
});
afterAll(async () => {
  await stub.close();
  rmSync(base, { recursive: true, force: true });
});

async function run(spec: Partial<RunSpecInput>, options: Partial<DriverOptions> = {}) {
  const sink = new MemorySink();
  const runId = `gw-${Math.random().toString(36).slice(2, 10)}`;
  const env = { TCAB_RUN_ROOT: base };
  const result = await executeRun(RunSpec.parse({ harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'look around', maxRuntimeSeconds: 120, ...spec }), {
    runId,
    env,
    sinks: [sink],
    user: resolveRunUser(env, process.getuid!()),
    credentialSource: { kind: 'home', home: join(base, 'no-home') },
    stub: { baseUrl: stub.url, apiKey: REAL_KEY },
    ...options,
  });
  const events = sink.events.map((e) => e.event);
  for (const e of events) expect(HarnessEvent.safeParse(e).success).toBe(true);
  expect(RunResult.safeParse(result).success).toBe(true);
  const looked = new Map(toolResults(stub.requests).flatMap((r) => String((JSON.parse(r) as { output?: string }).output ?? r).split('\n')).filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return { result, events, looked };
}

describe('executeRun through the model gateway', () => {
  it('the provider gets the real key, the harness a per-run token: the key is in neither its environment nor its parent\'s; the wire usage is what the provider served', async () => {
    const { result, events, looked } = await run({});
    expect(result.outcome).toBe('succeeded');
    // The stub (the provider) saw the real key on every request, never the token.
    expect(stub.requests.length).toBe(2);
    for (const r of stub.requests) {
      expect(r.headers['x-api-key']).toBe(REAL_KEY);
      expect(JSON.stringify(r.headers)).not.toContain(TOKEN_PREFIX);
    }
    // The agent saw a token, not the key.
    expect(Object.fromEntries(looked)).toEqual({ 'key.prefix': TOKEN_PREFIX.slice(0, 7), env: 'clean', parent: 'clean' });
    // Measured on the wire: both responses' usage, by class (Anthropic's wire reports no reasoning).
    expect(result.wire).toEqual({ requests: 2, tokens: { input: 240, output: 60, cache_read: 80, cache_write: 20, reasoning: null }, cost_usd: expect.any(Number), unmetered: 0, throttled: 0, refused: 0 });
    expect(result.wire!.cost_usd).toBeGreaterThan(0);
    // gg reports what the stub served: the two agree, so no disagreement is said.
    expect(result.tokens).toMatchObject({ input: 240, output: 60, cache_read: 80, cache_write: 20 });
    expect(events.some((e) => e.type === 'warning' && e.code === 'usage_disagrees')).toBe(false);
    // The real key is nowhere in what the run published.
    expect(JSON.stringify({ result, events })).not.toContain(REAL_KEY);
  });

  it('a budget of tokens: the request past it is refused in the provider\'s shape, the run ends budget_exceeded (exit 6), and the provider saw no more', async () => {
    const { result, events } = await run({ budget: { maxTokens: { total: 100 } } });
    expect(result.outcome).toBe('budget_exceeded');
    expect(OUTCOME_EXIT[result.outcome]).toBe(6);
    expect(result.message).toMatch(/the run reached its budget \(maxTokens\.total 100\)/);
    // One request went through (200 tokens measured), the next was refused before the stub saw it.
    expect(stub.requests.length).toBe(1);
    expect(result.wire).toMatchObject({ requests: 1, refused: 1 });
    expect(events.filter((e) => e.type === 'error' && e.code === 'budget_exceeded')).toHaveLength(1);
  });

  it('--no-gateway (gateway: false): today\'s injection, no wire account', async () => {
    const { result, looked } = await run({}, { gateway: false });
    expect(result.outcome).toBe('succeeded');
    expect(result.wire).toBeNull();
    expect(looked.get('env')).toBe('has-key');
  });

  it("a driver Pod of the cluster's gateway (TCAB_GATEWAY_URL): the key variable holds the dispatcher's token, the driver holds no key and hosts no gateway; the wire account and the budget come from that gateway", async () => {
    const cluster = await startGateway({ providers: providerConfigs({ anthropic: { upstream: stub.url } }), keys: { anthropic: REAL_KEY }, signingKey: Buffer.alloc(32, 4), log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }, adminToken: 'fake-admin-token-0123456789abcdef' });
    try {
      const pod = (token: string) => ({ stub: { baseUrl: 'http://127.0.0.1:9', apiKey: token }, env: { TCAB_RUN_ROOT: base, TCAB_GATEWAY_URL: cluster.url, TCAB_GATEWAY_PROVIDER: 'anthropic' } });
      const token = cluster.mint('gw-cluster', 'uid-1', 600);
      const { result, looked } = await run({}, pod(token));
      expect(result.outcome).toBe('succeeded');
      for (const r of stub.requests) expect(r.headers['x-api-key']).toBe(REAL_KEY);
      expect(Object.fromEntries(looked)).toEqual({ 'key.prefix': TOKEN_PREFIX.slice(0, 7), env: 'clean', parent: 'clean' });
      expect(result.wire).toMatchObject({ requests: 2, tokens: { input: 240, output: 60, cache_read: 80, cache_write: 20 }, refused: 0 });
      expect(JSON.stringify(result)).not.toContain(token);
      stub.requests.length = 0;
      // The budget signed into the dispatcher's token holds the run: the gateway refuses, the driver's watch ends it.
      const limited = await run({}, pod(cluster.mint('gw-cluster-2', 'uid-1', 600, { maxTokens: { total: 100 } })));
      expect(limited.result.outcome).toBe('budget_exceeded');
      expect(stub.requests.length).toBe(1);
      expect(limited.result.wire).toMatchObject({ requests: 1, refused: 1 });
    } finally {
      await cluster.close();
    }
  });

  it('an agent that spends on the side (its own request with the run\'s token): the harness never reports it, the wire does, and the run says they disagree', async () => {
    // The agent's command: one request of its own to the model, through the base URL and token its harness has.
    const SIDE = `node -e 'fetch(process.env.TCAB_GG_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-api-key": process.env.TCAB_GG_API_KEY, "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "side spend" }] }) }).then((r) => console.log("side=" + r.status))'`;
    const spender = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: SIDE } } }, { text: 'Done.' }], usage: USAGE, rules: [{ when_last_user_contains: 'side spend', step: { text: 'ok', usage: { input: 5000, output: 7, cache_read: 0, cache_write: 0, reasoning: 0 } } }] } });
    try {
      const { result, events } = await run({}, { stub: { baseUrl: spender.url, apiKey: REAL_KEY } });
      expect(result.outcome).toBe('succeeded');
      expect(spender.requests.length).toBe(3);
      expect(toolResults(spender.requests).join('\n')).toContain('side=200');
      // gg reports its own two requests; the wire all three.
      expect(result.tokens).toMatchObject({ input: 240, output: 60 });
      expect(result.wire).toMatchObject({ requests: 3, tokens: { input: 5240, output: 67 } });
      const said = events.filter((e) => e.type === 'warning' && e.code === 'usage_disagrees').map((e) => (e as { message: string }).message);
      expect(said.join('\n')).toMatch(/input/);
    } finally {
      await spender.close();
    }
  });
});
