// A Run's gateway token as data (its Secret, name, lifetime) and when its attempt is revoked at the gateway.
import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import type { CoreV1Api, V1Pod, V1Secret } from '@kubernetes/client-node';
import { verifyToken } from '../../gateway/token.ts';
import { createLogger } from '../../shared/log.ts';
import { GATEWAY_CONTROL } from '../../shared/gateway.ts';
import { RunMemory } from '../controller/run-memory.ts';
import { GATEWAY_LABEL, driverPodName } from '../pods/driver-pod.ts';
import { CREDENTIAL_MARGIN_MS } from './run-credentials.ts';
import { GatewayTokenIssuer, MAX_GATEWAY_TOKEN_LIFETIME_S, gatewayTokenSecret, gatewayTokenSecretName, revokeRequestOf, tokenLifetimeSeconds } from './gateway-tokens.ts';

const ref = { namespace: 'evals', name: 'fix-bug', uid: '0f0e0d0c-0b0a-0908-0706-050403020100' };
const now = new Date('2026-12-05T02:00:00Z');
const signingKey = Buffer.alloc(32, 7);
const GATEWAY = 'http://t-tcab-gateway.evals.svc.cluster.local:8080';
const ADMIN = 'admin-token-of-at-least-24-chars';
const silent = createLogger({ component: 'test', level: 'silent' });

function fakeCore(existing = false) {
  const created: V1Secret[] = [];
  const core = {
    createNamespacedSecret: async ({ body }: { body: V1Secret }) => {
      if (existing) throw Object.assign(new Error('exists'), { code: 409 });
      created.push(body);
      return body;
    },
  } as unknown as CoreV1Api;
  return { core, created };
}

function issuerWith(agent: MockAgent, core: CoreV1Api, memory = new RunMemory()) {
  return new GatewayTokenIssuer({ core, memory, gateway: { url: GATEWAY, signingKey, adminToken: ADMIN }, log: silent, now: () => now, dispatcher: agent, retryMinTimeoutMs: 1 });
}

const podOf = (uid: string, labelled: boolean): V1Pod => ({ metadata: { name: driverPodName(ref), labels: labelled ? { [GATEWAY_LABEL]: 'anthropic' } : {}, ownerReferences: [{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', name: ref.name, uid }] } });

describe('the gateway token as data', () => {
  it('is named after the driver Pod and the Run\'s uid', () => {
    expect(gatewayTokenSecretName(ref)).toBe(`tcab-run-fix-bug-gw-${ref.uid}`);
    expect(gatewayTokenSecretName({ ...ref, name: 'x'.repeat(200) }).length).toBeLessThanOrEqual(253);
  });

  it('lives the Run\'s limit plus the NATS credential\'s margin, never longer than the gateway accepts', () => {
    expect(tokenLifetimeSeconds(600)).toBe(600 + CREDENTIAL_MARGIN_MS / 1000);
    expect(tokenLifetimeSeconds(7 * 24 * 3600)).toBe(MAX_GATEWAY_TOKEN_LIFETIME_S);
  });

  it('is a Secret owned by the Run (controller), immutable, its provider labelled', () => {
    expect(gatewayTokenSecret(ref, 'tcabgw_x.y', 'anthropic')).toMatchObject({
      metadata: { name: gatewayTokenSecretName(ref), namespace: 'evals', labels: { [GATEWAY_LABEL]: 'anthropic' }, ownerReferences: [{ kind: 'Run', name: 'fix-bug', uid: ref.uid, controller: true, blockOwnerDeletion: true }] },
      immutable: true,
      stringData: { token: 'tcabgw_x.y' },
    });
    expect(revokeRequestOf(ref)).toEqual({ run: 'evals_fix-bug', attempt: ref.uid });
  });
});

describe('GatewayTokenIssuer', () => {
  it('mints a token for the run id and Run uid, with the Run\'s budget and lifetime, into the Run\'s Secret', async () => {
    const { core, created } = fakeCore();
    const memory = new RunMemory();
    const agent = new MockAgent();
    agent.disableNetConnect();
    const name = await issuerWith(agent, core, memory).issue('evals/fix-bug', ref, { maxRuntimeSeconds: 900, budget: { maxTokens: { total: 1000 } } }, 'anthropic');
    expect(name).toBe(gatewayTokenSecretName(ref));
    const token = (created[0]!.stringData as Record<string, string>).token!;
    const check = verifyToken(token, { key: signingKey, nowMs: now.getTime(), maxLifetimeSeconds: MAX_GATEWAY_TOKEN_LIFETIME_S });
    expect(check).toEqual({ ok: true, claims: { run: 'evals_fix-bug', attempt: ref.uid, exp: now.getTime() / 1000 + tokenLifetimeSeconds(900), budget: { maxTokens: { total: 1000 } } } });
    expect(memory.peek('evals/fix-bug', ref.uid)?.gatewayToken).toBe(true);
  });

  it('a retried claim reuses the Secret that exists (409), and still owes the revocation', async () => {
    const { core } = fakeCore(true);
    const memory = new RunMemory();
    expect(await issuerWith(new MockAgent(), core, memory).issue('evals/fix-bug', ref, { maxRuntimeSeconds: 900 }, 'anthropic')).toBe(gatewayTokenSecretName(ref));
    expect(memory.peek('evals/fix-bug', ref.uid)?.gatewayToken).toBe(true);
  });

  it('revokes once per Run with the admin token, retrying a 503; nothing for a Run with no sign of a token', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get(GATEWAY);
    const seen: { auth: unknown; body: unknown }[] = [];
    const reply = (status: number) => (opts: { headers?: unknown; body?: unknown }) => {
      seen.push({ auth: (opts.headers as Record<string, string>).authorization, body: JSON.parse(String(opts.body)) });
      return { statusCode: status, data: '' };
    };
    pool.intercept({ path: GATEWAY_CONTROL.revoke, method: 'POST' }).reply(reply(503));
    pool.intercept({ path: GATEWAY_CONTROL.revoke, method: 'POST' }).reply(reply(204));
    const memory = new RunMemory();
    const issuer = issuerWith(agent, fakeCore().core, memory);
    // No token minted here, no labelled Pod of this Run: nothing to revoke.
    issuer.retire('evals/fix-bug', ref, podOf('another-uid', true), 'final');
    issuer.retire('evals/fix-bug', ref, podOf(ref.uid, false), 'final');
    expect(memory.peek('evals/fix-bug', ref.uid)?.gatewayRetired).toBeUndefined();
    // The Run's own labelled Pod (a claim by an earlier leader): revoked, once.
    issuer.retire('evals/fix-bug', ref, podOf(ref.uid, true), 'final');
    issuer.retire('evals/fix-bug', ref, podOf(ref.uid, true), 'deleted');
    await expect.poll(() => seen.length).toBe(2);
    expect(seen).toEqual([0, 1].map(() => ({ auth: `Bearer ${ADMIN}`, body: { run: 'evals_fix-bug', attempt: ref.uid } })));
    expect(memory.peek('evals/fix-bug', ref.uid)?.gatewayRetired).toBe(true);
    agent.assertNoPendingInterceptors();
  });

  it('a refusal (401) is not retried and only logged: the token expires anyway', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    let calls = 0;
    agent.get(GATEWAY).intercept({ path: GATEWAY_CONTROL.revoke, method: 'POST' }).reply(() => {
      calls += 1;
      return { statusCode: 401, data: '' };
    }).times(3);
    const lines: string[] = [];
    const log = createLogger({ component: 'test', level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const memory = new RunMemory();
    memory.entry('evals/fix-bug', ref.uid).gatewayToken = true;
    new GatewayTokenIssuer({ core: fakeCore().core, memory, gateway: { url: GATEWAY, signingKey, adminToken: ADMIN }, log, dispatcher: agent, retryMinTimeoutMs: 1 }).retire('evals/fix-bug', ref, undefined, 'final');
    await expect.poll(() => lines.length).toBe(1);
    expect(calls).toBe(1);
    expect(lines[0]).toMatch(/revoking the run's gateway token failed/);
    expect(lines[0]).not.toContain(ADMIN);
  });

  it('revokes again after a gateway restart: every given Run, even one already retired, counting what the gateway took', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const bodies: unknown[] = [];
    agent.get(GATEWAY).intercept({ path: GATEWAY_CONTROL.revoke, method: 'POST' }).reply((opts) => {
      bodies.push(JSON.parse(String(opts.body)));
      return { statusCode: bodies.length === 2 ? 400 : 204, data: '' };
    }).times(3);
    const memory = new RunMemory();
    memory.entry('evals/fix-bug', ref.uid).gatewayRetired = true;
    const other = { ...ref, name: 'other', uid: '00000000-0000-4000-8000-000000000002' };
    const third = { ...ref, name: 'third', uid: '00000000-0000-4000-8000-000000000003' };
    const done = await issuerWith(agent, fakeCore().core, memory).revokeAgain([ref, other, third]);
    expect(done).toBe(2); // the 400 is not retried
    expect(bodies).toHaveLength(3);
    expect(bodies).toContainEqual({ run: 'evals_other', attempt: other.uid });
  });
});
