// Issue 34 item 5, the cluster half: Runs sharing a login whose refresh token rotates on use (Codex's auth.json,
// manifest `auth.subscription.serialize`) never hold two slots at once; the others wait queued, 'login-busy'.
import { describe, expect, it } from 'vitest';
import { getHarness, manifestForModel } from '../../harnesses/registry.ts';
import { decideClaims } from './decide.ts';
import type { QueuedRun, RunPhase } from './decide.ts';
import { serializedLoginOf, serializedLoginResolver, subscriptionLogin } from './serialized-login.ts';

let clock = 0;
const run = (key: string, harness: string, phase: RunPhase = 'Pending', login?: string): QueuedRun => ({ key, harness, phase, createdAt: ++clock, ...(login ? { login } : {}) });
const L = 'secret/codex-login';

describe('decideClaims with serialised logins', () => {
  it.each([
    {
      name: 'of five Pending runs on one login, only the oldest is claimed; the rest wait login-busy',
      runs: [run('c1', 'codex', 'Pending', L), run('c2', 'codex', 'Pending', L), run('c3', 'codex', 'Pending', L), run('c4', 'codex', 'Pending', L), run('c5', 'codex', 'Pending', L)],
      limits: {},
      maxInFlight: null,
      claim: ['c1'],
      waiting: { c2: 'login-busy', c3: 'login-busy', c4: 'login-busy', c5: 'login-busy' },
    },
    {
      name: 'a run in flight on the login holds it: nothing on that login is claimed',
      runs: [run('c0', 'codex', 'Running', L), run('c1', 'codex', 'Pending', L)],
      limits: {},
      maxInFlight: null,
      claim: [],
      waiting: { c1: 'login-busy' },
    },
    {
      name: 'Dispatched and Starting hold the login too; a finished run does not',
      runs: [run('c8', 'codex', 'Succeeded', L), run('c9', 'codex', 'Failed', L), run('c1', 'codex', 'Pending', L), run('d0', 'codex', 'Dispatched', 'secret/other'), run('d1', 'codex', 'Pending', 'secret/other')],
      limits: {},
      maxInFlight: null,
      claim: ['c1'],
      waiting: { d1: 'login-busy' },
    },
    {
      name: 'a busy login never holds back the runs behind it in its harness queue (api-key runs, other logins)',
      runs: [run('c0', 'codex', 'Running', L), run('c1', 'codex', 'Pending', L), run('k1', 'codex'), run('c2', 'codex', 'Pending', L), run('o1', 'codex', 'Pending', 'secret/other'), run('k2', 'codex')],
      limits: {},
      maxInFlight: null,
      claim: ['k1', 'o1', 'k2'],
      waiting: { c1: 'login-busy', c2: 'login-busy' },
    },
    {
      name: 'a waiting run on a busy login takes no global room: the room goes to runs that can start',
      runs: [run('c0', 'codex', 'Running', L), run('c1', 'codex', 'Pending', L), run('b1', 'claude')],
      limits: {},
      maxInFlight: 2,
      claim: ['b1'],
      waiting: { c1: 'login-busy' },
    },
    {
      name: 'one login across two harnesses (one Secret configured for both) is still one at a time',
      runs: [run('c1', 'codex', 'Pending', L), run('x1', 'other', 'Pending', L)],
      limits: {},
      maxInFlight: null,
      claim: ['c1'],
      waiting: { x1: 'login-busy' },
    },
    {
      name: 'the harness cap still applies to the run that holds the login',
      runs: [run('c1', 'codex', 'Pending', L), run('k1', 'codex')],
      limits: { codex: 0 },
      maxInFlight: null,
      claim: [],
      waiting: { c1: 'harness-cap', k1: 'harness-cap' },
    },
  ])('$name', ({ runs, limits, maxInFlight, claim, waiting }) => {
    const decision = decideClaims({ runs, limits, maxInFlight });
    expect(decision.claim).toEqual(claim);
    expect(decision.waiting).toEqual(waiting);
  });
});

describe('serializedLoginOf (the Run -> login the claim pass feeds decideClaims)', () => {
  const codex = getHarness('codex').manifest;
  const claude = getHarness('claude').manifest;
  const config = { TCAB_SUBSCRIPTION_SECRETS: { codex: 'codex-login', claude: 'claude-login' }, TCAB_API_KEY_SECRETS: [{ env: 'OPENAI_API_KEY', secret: 'keys', key: 'openai' }], TCAB_DRIVER_ENV: {} };
  const secrets = new Set(['codex-login', 'claude-login', 'keys']);

  it('codex declares why its login is serialised', () => {
    expect(codex.auth.subscription?.serialize).toMatch(/refresh token/);
  });

  it.each([
    { name: 'codex in subscription mode: the Secret is the login', manifest: codex, spec: { harness: 'codex', authMode: 'subscription' as const }, login: subscriptionLogin('codex-login') },
    { name: 'codex in auto mode with the Secret present resolves to the subscription', manifest: codex, spec: { harness: 'codex', authMode: 'auto' as const }, login: subscriptionLogin('codex-login') },
    { name: 'codex in api-key mode holds no login', manifest: codex, spec: { harness: 'codex', authMode: 'api-key' as const }, login: undefined },
    { name: 'a harness without serialize holds no login', manifest: claude, spec: { harness: 'claude', authMode: 'subscription' as const }, login: undefined },
  ])('$name', ({ manifest, spec, login }) => {
    expect(serializedLoginOf(manifest, spec, config, secrets)).toBe(login);
  });

  it('no Secret, no login (the Run is refused at its claim and holds nothing)', () => {
    expect(serializedLoginOf(codex, { harness: 'codex', authMode: 'subscription' }, config, new Set(['keys']))).toBeUndefined();
  });

  it('the resolver reads raw Run specs: unknown harnesses and invalid specs hold no login', () => {
    const loginOf = serializedLoginResolver(config, secrets, (slug, model) => manifestForModel(getHarness(slug), model));
    expect(loginOf({ harness: 'codex', model: 'gpt-5.5', prompt: 'p', authMode: 'subscription' })).toBe(subscriptionLogin('codex-login'));
    expect(loginOf({ harness: 'nope', model: 'm', prompt: 'p' })).toBeUndefined();
    expect(loginOf({ harness: 'codex', model: 'gpt-5.5' })).toBeUndefined(); // no prompt: invalid
    expect(loginOf(undefined)).toBeUndefined();
  });
});

describe('five codex Runs on one subscription Secret, passes of the claim decision as their Pods run and finish', () => {
  it('claims them one after another in creation order, never two in flight, none failed', () => {
    const config = { TCAB_SUBSCRIPTION_SECRETS: { codex: 'codex-login' }, TCAB_API_KEY_SECRETS: [], TCAB_DRIVER_ENV: {} };
    const loginOf = serializedLoginResolver(config, new Set(['codex-login']), (slug, model) => manifestForModel(getHarness(slug), model));
    const specs = [1, 2, 3, 4, 5].map((i) => ({ key: `ns/codex-${i}`, spec: { harness: 'codex', model: 'gpt-5.5', prompt: `run ${i}`, authMode: 'subscription' } }));
    const phase = new Map<string, RunPhase>(specs.map((s) => [s.key, 'Pending']));
    const claimedOrder: string[] = [];
    let maxInFlight = 0;
    let passes = 0;
    while ([...phase.values()].some((p) => p !== 'Succeeded') && passes < 50) {
      passes += 1;
      const runs = specs.map((s, i) => ({ key: s.key, harness: 'codex', phase: phase.get(s.key)!, createdAt: i, ...(loginOf(s.spec) ? { login: loginOf(s.spec)! } : {}) }));
      const decision = decideClaims({ runs, limits: {}, maxInFlight: null });
      for (const key of decision.claim) {
        claimedOrder.push(key);
        phase.set(key, 'Dispatched');
      }
      for (const [key, p] of phase) if (p === 'Pending') expect(decision.waiting[key]).toBe('login-busy');
      maxInFlight = Math.max(maxInFlight, [...phase.values()].filter((p) => p === 'Dispatched' || p === 'Starting' || p === 'Running').length);
      // The Run in flight moves on one phase per pass: Dispatched -> Running -> Succeeded.
      for (const [key, p] of phase) {
        if (p === 'Running') phase.set(key, 'Succeeded');
        else if (p === 'Dispatched' && !decision.claim.includes(key)) phase.set(key, 'Running');
      }
    }
    expect(claimedOrder).toEqual(specs.map((s) => s.key));
    expect(maxInFlight).toBe(1);
    expect([...phase.values()]).toEqual(['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']);
  });
});
