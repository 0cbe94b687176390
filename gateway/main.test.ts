// The cluster gateway as the chart runs it: `node gateway/main.ts` in a process of its own, configured only by its
// environment and the auth files. A token minted elsewhere with the shared signing key (what the dispatcher does)
// is honoured; /metrics is on its own port and not on the one runs reach; the key is never in its log.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../driver/stub-models/index.ts';
import type { StubModelServer } from '../driver/stub-models/index.ts';
import { claimsFor, mintToken } from './token.ts';
import { GATEWAY_CONTROL, GatewayRunUsage } from '../shared/gateway.ts';

const KEY = 'sk-ant-fake-main-canary-key-7d3e';
const ADMIN = 'fake-admin-token-main-0123456789';
const SIGNING = Buffer.alloc(48, 0x33);
let dir: string;
let stub: StubModelServer;
let child: ChildProcess;
const log: string[] = [];
let port = 0;
let metricsPort = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-gateway-main-'));
  writeFileSync(join(dir, 'signing-key'), SIGNING.toString('base64'));
  writeFileSync(join(dir, 'admin-token'), `${ADMIN}\n`);
  stub = await startStubModelServer({ script: { steps: [{ text: 'hi' }] } });
  child = spawn(process.execPath, [join(import.meta.dirname, 'main.ts')], {
    env: {
      PATH: process.env.PATH,
      ANTHROPIC_API_KEY: KEY,
      TCAB_GATEWAY_PORT: '0',
      TCAB_GATEWAY_METRICS_PORT: '0',
      TCAB_GATEWAY_SIGNING_KEY_FILE: join(dir, 'signing-key'),
      TCAB_GATEWAY_ADMIN_TOKEN_FILE: join(dir, 'admin-token'),
      TCAB_GATEWAY_UPSTREAMS: JSON.stringify({ anthropic: stub.url }),
      TCAB_LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = createInterface({ input: child.stderr! });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}: ${log.join('\n')}`)));
    lines.on('line', (line) => {
      log.push(line);
      const parsed = JSON.parse(line) as { msg?: string; port?: number; metricsPort?: number };
      if (parsed.msg === 'gateway: serving') {
        port = parsed.port!;
        metricsPort = parsed.metricsPort!;
        resolve();
      }
    });
  });
});
afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('gateway/main.ts', () => {
  it('honours a token minted with the shared signing key, meters the answer, and keeps the key out of its log', async () => {
    const token = mintToken(claimsFor('ns_run-1', 'uid-1', 600, Date.now()), SIGNING);
    const res = await fetch(`http://127.0.0.1:${port}/p/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] }) });
    expect(res.status).toBe(200);
    await res.text();
    await expect.poll(async () => GatewayRunUsage.parse(await (await fetch(`http://127.0.0.1:${port}${GATEWAY_CONTROL.usage}`, { headers: { authorization: `Bearer ${token}` } })).json()).requests).toBe(1);
    // A token signed with another key is refused.
    const foreign = mintToken(claimsFor('ns_run-1', 'uid-1', 600, Date.now()), Buffer.alloc(48, 1));
    expect((await fetch(`http://127.0.0.1:${port}/p/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': foreign }, body: '{}' })).status).toBe(401);
    expect(log.join('\n')).not.toContain(KEY);
    expect(log.join('\n')).not.toContain(token);
  });

  it('serves /metrics on its own port only; the admin routes take the token from its file', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('tcab_gateway_requests_total');
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}${GATEWAY_CONTROL.throttles}`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
  });

  it('stops on SIGTERM with exit 0', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
