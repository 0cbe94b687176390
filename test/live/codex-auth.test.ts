// Issue 5 end to end with a real CLI (Codex, newest release): API-key mode injects the key under CODEX_API_KEY only
// (the stub sees it as a Bearer token; no other secret reaches the process); subscription mode copies the
// credential file to the CLI's path (0600) and Codex's own `login status` reports signed in. The workspace
// never holds a credential.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_PREFIX } from '../../gateway/index.ts';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { RunSpec } from '../../shared/run.ts';
import { startStubModelServer } from '../../driver/stub-models/index.ts';
import type { StubModelServer } from '../../driver/stub-models/index.ts';

const CANARY = 'sk-proj-fake-canary-codex-0123456789';
const OTHER = 'sk-ant-fake-other-secret-0123456789';
let base: string;
let stub: StubModelServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-codex-auth-'));
  stub = await startStubModelServer({
    script: { steps: [{ tool: { name: 'exec_command', args: { cmd: 'env > "$HOME/../env-seen"; ls -A > "$HOME/../workspace-listing"' } } }, { text: 'Done.' }] },
  });
});
afterAll(async () => {
  await stub.close();
  rmSync(base, { recursive: true, force: true });
});

async function run(runId: string, env: Record<string, string | undefined>, home: string) {
  const sink = new MemorySink();
  const fullEnv = { ...process.env, ANTHROPIC_API_KEY: OTHER, TCAB_RUN_ROOT: base, TCAB_BASE_URL_CODEX: stub.url, ...env };
  const spec = RunSpec.parse({ harness: 'codex', model: 'gpt-5.5', prompt: 'do the thing', testCase: { source: { files: [{ path: 'README.md', content: 'seed' }] } } });
  const result = await executeRun(spec, {
    runId,
    env: fullEnv,
    sinks: [sink],
    user: resolveRunUser(fullEnv, process.getuid!()),
    credentialSource: { kind: 'home', home },
    keep: true,
  });
  return { result, sink, root: join(base, 'runs', runId) };
}

describe('codex authentication (real CLI)', () => {
  it('api-key mode through the model gateway: the stub (the provider) sees the key as a Bearer token, the harness only a per-run token; no other secret reaches the harness', async () => {
    stub.requests.length = 0;
    const { result, sink, root } = await run('codex-key', { TCAB_AUTH_MODE: 'api-key', OPENAI_API_KEY: CANARY }, join(base, 'nobody'));
    expect(result).toMatchObject({ outcome: 'succeeded', auth_mode: 'api-key' });
    const calls = stub.requests.filter((r) => r.path === '/v1/responses');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((r) => r.headers.authorization === `Bearer ${CANARY}`)).toBe(true);
    const env = readFileSync(join(root, 'env-seen'), 'utf8');
    // Issue 34: the key stays in the driver; the harness's variable holds the gateway's token for this run.
    expect(env).toMatch(new RegExp(`^CODEX_API_KEY=${TOKEN_PREFIX}`, 'm'));
    expect(env).not.toContain(CANARY);
    expect(env).not.toContain('OPENAI_API_KEY=');
    expect(env).not.toContain(OTHER);
    expect(readFileSync(join(root, 'workspace-listing'), 'utf8').trim()).toBe('README.md');
    expect(JSON.stringify(sink.events)).not.toContain(CANARY);
    rmSync(root, { recursive: true, force: true });
  });

  it('subscription mode: auth.json is copied to ~/.codex (0600), no key is injected, and `codex login status` reports signed in', async () => {
    const home = join(base, 'user-home');
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(join(home, '.codex/auth.json'), JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: 'sk-proj-fake-subscription-0123456789' }));
    const { result, root } = await run('codex-sub', { TCAB_AUTH_MODE: 'subscription', OPENAI_API_KEY: CANARY }, home);
    expect(result.auth_mode).toBe('subscription');
    const copied = join(root, 'home/.codex/auth.json');
    expect(statSync(copied).mode & 0o777).toBe(0o600);
    // Offline, Codex cannot use auth.json against the stub (a custom provider reads its key only from env_key),
    // so the session itself fails to authenticate; Codex's own status command is the check (issue 5).
    expect(readdirSync(join(root, 'workspace'))).toEqual(['README.md']);
    const user = resolveRunUser(process.env, process.getuid!());
    const status = spawnSync(join(root, 'prefix/bin/codex'), ['login', 'status'], {
      env: { PATH: `${join(root, 'prefix/bin')}:${process.env.PATH}`, HOME: join(root, 'home') },
      uid: user.uid,
      gid: user.gid,
      encoding: 'utf8',
    });
    expect(status.status).toBe(0);
    // Codex answers on stderr, with the key masked: "API key configured - sk-proj-***56789".
    expect(`${status.stdout}${status.stderr}`).toMatch(/API key configured - sk-proj-\*\*\*56789|Logged in/);
    rmSync(root, { recursive: true, force: true });
  });
});
