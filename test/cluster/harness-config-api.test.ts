// The dispatcher's HTTP API on its real store (HarnessConfig objects on the test apiserver), driven by
// `tcab harness-config`: a set without or with a wrong token is 401, a bad body 400 naming the field.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../console/api/server.ts';
import { kubeHarnessConfigStore } from '../../console/api/harness-config-store.ts';
import { listHarnesses } from '../../harnesses/registry.ts';
import { clusterConfig, kubectl } from './support.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const TOKEN = 'fake-dispatcher-api-token';
const READ_TOKEN = 'fake-dispatcher-api-read-token';
let api: FastifyInstance;
let url: string;

beforeAll(async () => {
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/harnessconfigs.tcab.dev', '--timeout=30s']);
  await kubectl(['delete', 'harnessconfigs', '--all']);
  api = buildApi({ store: kubeHarnessConfigStore(clusterConfig()), slugs: () => listHarnesses().map((h) => h.manifest.slug), token: () => TOKEN, readAuth: { mode: 'token', readToken: () => READ_TOKEN }, readiness: () => ({ informersSynced: true, natsConnected: true, leader: false }) });
  url = await api.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => api?.close());

const tcab = async (args: string[], token?: string, env: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'cli/main.ts'), 'harness-config', '--url', url, ...args], { env: { PATH: process.env.PATH, ...(token ? { TCAB_API_TOKEN: token } : {}), ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

describe('tcab harness-config against the dispatcher API and the apiserver', () => {
  it('set writes the HarnessConfig object; get lists every harness with its config or the default', async () => {
    expect(await tcab(['set', 'codex', '3'], TOKEN)).toMatchObject({ code: 0, stdout: 'codex: max parallelism 3\n' });
    expect(await tcab(['set', 'gg', 'unlimited'], TOKEN)).toMatchObject({ code: 0 });
    expect((await kubectl(['get', 'harnessconfig', 'codex', '-o', 'jsonpath={.spec.maxParallelism}'])).stdout).toBe('3');
    // get reads with the read token (TCAB_API_READ_TOKEN); without any token it is refused (401, exit 2).
    expect(await tcab(['get'])).toMatchObject({ code: 2, stderr: expect.stringContaining('HTTP 401') });
    const listed = JSON.parse((await tcab(['get', '--json'], undefined, { TCAB_API_READ_TOKEN: READ_TOKEN })).stdout) as { slug: string; maxParallelism: number | null; default: boolean }[];
    expect(listed.find((c) => c.slug === 'codex')).toEqual({ slug: 'codex', maxParallelism: 3, default: false });
    expect(listed.find((c) => c.slug === 'gg')).toEqual({ slug: 'gg', maxParallelism: null, default: false });
    expect(listed.find((c) => c.slug === 'claude')).toEqual({ slug: 'claude', maxParallelism: null, default: true });
  });

  it('refuses a set without the token or with a wrong one (401), and an invalid body naming the field (400)', async () => {
    expect(await tcab(['set', 'codex', '1'])).toMatchObject({ code: 2, stderr: expect.stringContaining('TCAB_API_TOKEN') });
    expect(await tcab(['set', 'codex', '1'], 'not-the-token')).toMatchObject({ code: 2, stderr: expect.stringContaining('HTTP 401') });
    const noToken = await fetch(`${url}/harness-config/codex`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"maxParallelism":1}' });
    expect(noToken.status).toBe(401);
    const bad = await fetch(`${url}/harness-config/codex`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: '{"maxParallelism":-1}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('maxParallelism');
    expect(await tcab(['set', 'no-such-harness', '1'], TOKEN)).toMatchObject({ code: 2, stderr: expect.stringContaining('HTTP 404') });
    expect((await kubectl(['get', 'harnessconfig', 'codex', '-o', 'jsonpath={.spec.maxParallelism}'])).stdout).toBe('3');
  });
});
