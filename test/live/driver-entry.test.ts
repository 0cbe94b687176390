// `tcab-driver`, the Pod's entry point, as a process: spec and settings from the environment, the real Claude Code
// CLI against the stub model through TCAB_BASE_URL_CLAUDE, every event as NDJSON on stdout, exit code = outcome.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubModelServer } from '../../driver/stub-models/index.ts';
import type { StubModelServer } from '../../driver/stub-models/index.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const CANARY = 'sk-ant-fake-canary-driver-entry-0000';
let base: string;
let stub: StubModelServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-driver-entry-'));
  stub = await startStubModelServer({ script: { steps: [{ text: 'Hello from the stub.' }] } });
});
afterAll(async () => {
  await stub.close();
  rmSync(base, { recursive: true, force: true });
});

function driver(env: Record<string, string>) {
  return exec(process.execPath, [join(ROOT, 'bin/tcab-driver.js')], { env: { ...process.env, TCAB_RUN_ROOT: base, ...env }, maxBuffer: 32 << 20 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

describe('tcab-driver', () => {
  it('runs the spec from the environment and prints every event and the result as NDJSON', async () => {
    const { code, stdout, stderr } = await driver({
      TCAB_RUN_ID: 'pod-run-1',
      TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'say hello', maxRuntimeSeconds: 300 }),
      TCAB_AUTH_MODE: 'api-key',
      ANTHROPIC_API_KEY: CANARY,
      TCAB_BASE_URL_CLAUDE: stub.url,
      TCAB_CREDENTIALS_DIR: join(base, 'no-secret-mounted'),
    });
    expect(code).toBe(0);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; message?: string });
    expect(events.find((e) => e.type === 'agent')).toMatchObject({ message: 'Hello from the stub.' });
    expect(stderr).toContain('"outcome":"succeeded"');
    expect(stdout + stderr).not.toContain(CANARY);
    expect(stub.requests.filter((r) => r.path.endsWith('/messages')).every((r) => r.headers['x-api-key'] === CANARY)).toBe(true);
  });

  it('rejects an invalid spec with the field named and exit status 2, before doing anything', async () => {
    const { code, stderr } = await driver({ TCAB_RUN_SPEC: JSON.stringify({ harness: 'Claude!', model: '', prompt: 'x' }) });
    expect(code).toBe(2);
    expect(stderr).toContain('harness: must be a harness slug');
    expect(stderr).toContain('model: Too small');
  });

  it('exits 3 (infrastructure) when the harness has no credentials, naming what to configure', async () => {
    const { code, stdout } = await driver({
      TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'x' }),
      ANTHROPIC_API_KEY: '',
      TCAB_CREDENTIALS_DIR: join(base, 'no-secret-mounted'),
    });
    expect(code).toBe(3);
    expect(stdout).toContain('set ANTHROPIC_API_KEY or TCAB_API_KEY_CLAUDE');
  });
});
