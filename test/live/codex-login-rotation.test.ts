// Issue 34 item 5 with the real Codex CLI (newest release): a ChatGPT login's refresh token is single-use. A stub
// OAuth token endpoint on 127.0.0.1 rotates like OpenAI's (each refresh token valid once; a spent one answers 401
// "refresh token has already been used"); Codex is pointed at it by its own CODEX_REFRESH_TOKEN_URL_OVERRIDE and
// refreshes because the login's access token has expired (its `exp` claim). A gate in front of the stub model
// refuses an expired access token with 401, as the real backend does. Five `tcab run`-equivalent driver runs start
// in parallel against one ~/.codex/auth.json:
// - serialised (codex's manifest sets `serialize`): all five succeed, every refresh presents a live token, and the
//   login ends holding the newest one (the driver wrote the rotated auth.json back);
// - control (the same manifest without `serialize`): every run presents the same refresh token, one wins, and the
//   others are logged out.
// The harness folder is generated: codex's own manifest (plus the override variable in [env]) and an adapter that
// is codex's, with its custom provider set to use the ChatGPT login (`requires_openai_auth`) instead of a key.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { RunSpec } from '../../shared/run.ts';
import { startStubModelServer } from '../../driver/stub-models/index.ts';
import type { StubModelServer } from '../../driver/stub-models/index.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = (claims: Record<string, unknown>) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.unsigned`;
const ACCOUNT = { chatgpt_plan_type: 'pro', chatgpt_account_id: 'acc-test', chatgpt_user_id: 'user-test' };
/** The tokens of generation n; the access token lives `ttl` seconds. */
const tokens = (n: number, exp: number) => ({
  id_token: jwt({ email: 'test@example.invalid', exp, 'https://api.openai.com/auth': ACCOUNT }),
  access_token: jwt({ exp, generation: n, 'https://api.openai.com/auth': ACCOUNT }),
  refresh_token: `rt-${n}-single-use`,
});
const expOf = (bearer: string | undefined): number => {
  try {
    return (JSON.parse(Buffer.from(bearer!.replace(/^Bearer /, '').split('.')[1]!, 'base64url').toString('utf8')) as { exp: number }).exp;
  } catch {
    return 0;
  }
};

interface Rotation {
  /** OAuth endpoint (CODEX_REFRESH_TOKEN_URL_OVERRIDE) and the model base URL (a gate in front of the stub). */
  tokenUrl: string;
  modelUrl: string;
  refreshes: { token: string; ok: boolean; reason?: string }[];
  refused: number;
  close(): Promise<void>;
}

async function startRotation(model: StubModelServer): Promise<Rotation> {
  const valid = new Set([tokens(0, 0).refresh_token]);
  let generation = 0;
  const refreshes: Rotation['refreshes'] = [];
  let refused = 0;
  const send = (res: ServerResponse, status: number, data: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(data));
  };
  const readAll = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      if (req.url === '/oauth/token') {
        const text = body.toString('utf8');
        const params = (req.headers['content-type'] ?? '').includes('json') ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text));
        const token = params.refresh_token ?? '';
        const ok = params.grant_type === 'refresh_token' && valid.delete(token);
        refreshes.push({ token, ok, ...(params.refresh_reason ? { reason: params.refresh_reason } : {}) });
        if (!ok) return send(res, 401, { error: { message: 'Your refresh token has already been used to generate a new access token. Please try signing in again.', type: 'invalid_request_error', code: 'refresh_token_reused' } });
        generation += 1;
        // An hour: the run that refreshed, and the runs after it that get the written-back login, need no other
        // refresh. (A token inside Codex's 5-minute proactive window made 0.171's session hang, not refresh once.)
        const next = tokens(generation, Math.floor(Date.now() / 1000) + 3600);
        valid.add(next.refresh_token);
        return send(res, 200, next);
      }
      // The model backend: an expired access token is refused, anything else goes to the stub model.
      if (expOf(req.headers.authorization) <= Date.now() / 1000) {
        refused += 1;
        return send(res, 401, { error: { message: 'Your authentication token has expired.', type: 'invalid_request_error', code: 'token_expired' } });
      }
      const upstream = new URL(model.url);
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host, 'content-length': String(body.length) } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      forward.on('error', () => send(res, 502, {}));
      forward.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    tokenUrl: `${base}/oauth/token`,
    modelUrl: base,
    refreshes,
    get refused() {
      return refused;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let base: string;
let model: StubModelServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-codex-rotation-'));
  chmodSync(base, 0o755);
  model = await startStubModelServer({ script: { steps: [{ text: 'Hi.' }] } });
});
afterAll(async () => {
  await model.close();
  rmSync(base, { recursive: true, force: true });
});

/** A harnesses root holding `codex`: the real manifest (+ the override; without `serialize` for the control). */
function codexHarness(tokenUrl: string, serialize: boolean): string {
  const root = mkdtempSync(join(base, 'harnesses-'));
  mkdirSync(join(root, 'codex'));
  chmodSync(root, 0o755);
  chmodSync(join(root, 'codex'), 0o755);
  let manifest = readFileSync(join(ROOT, 'harnesses/codex/harness.toml'), 'utf8');
  if (!serialize) manifest = manifest.replace(/^serialize = .*$/m, '');
  expect(manifest.includes('serialize = ')).toBe(serialize);
  writeFileSync(join(root, 'codex/harness.toml'), `${manifest}\n[env]\nCODEX_REFRESH_TOKEN_URL_OVERRIDE = ${JSON.stringify(tokenUrl)}\n`);
  writeFileSync(
    join(root, 'codex/adapter.ts'),
    `import codexAdapter from ${JSON.stringify(join(ROOT, 'harnesses/codex/adapter.ts'))};
// codex's adapter, its custom provider authenticating with the ChatGPT login instead of an API key variable.
export default function adapter(manifest) {
  const codex = codexAdapter(manifest);
  return { ...codex, invocation: (request) => {
    const invocation = codex.invocation(request);
    return { ...invocation, files: invocation.files.map((f) => ({ ...f, content: f.content.replace(/^env_key = .*$/m, 'requires_openai_auth = true') })) };
  } };
}
`,
  );
  return root;
}

async function fiveParallelCodexRuns(serialize: boolean) {
  const rotation = await startRotation(model);
  const harnessesRoot = codexHarness(rotation.tokenUrl, serialize);
  const home = join(base, `user-${serialize ? 'serial' : 'control'}`);
  mkdirSync(join(home, '.codex'), { recursive: true });
  // A ChatGPT login whose access token has expired: Codex refreshes before its first request.
  writeFileSync(join(home, '.codex/auth.json'), JSON.stringify({ OPENAI_API_KEY: null, tokens: { ...tokens(0, 1000), account_id: ACCOUNT.chatgpt_account_id }, last_refresh: '2020-01-01T00:00:00Z' }), { mode: 0o600 });
  const env = { ...process.env, TCAB_RUN_ROOT: base, TCAB_BASE_URL_CODEX: rotation.modelUrl, TCAB_AUTH_MODE: 'subscription' };
  const user = resolveRunUser(env, process.getuid!());
  try {
    const runs = await Promise.all(
      [1, 2, 3, 4, 5].map(async (i) => {
        const sink = new MemorySink();
        const result = await executeRun(RunSpec.parse({ harness: 'codex', model: 'gpt-5.5', prompt: 'Say hi.' }), {
          runId: `codex-rotation-${serialize ? 'serial' : 'control'}-${i}`,
          env,
          sinks: [sink],
          user,
          credentialSource: { kind: 'home', home },
          harnessesRoot,
        });
        const busy = sink.events.filter((r) => r.event.type === 'warning' && r.event.code === 'login_busy').length;
        return { result, busy, stderr: sink.events.map((r) => JSON.stringify(r.event)).filter((t) => /refresh/i.test(t)) };
      }),
    );
    const login = JSON.parse(readFileSync(join(home, '.codex/auth.json'), 'utf8')) as { tokens: { refresh_token: string } };
    // The figures, for whoever reads the run's output.
    process.stdout.write(`${JSON.stringify({ serialize, outcomes: runs.map((r) => r.result.outcome), loginBusyWarnings: runs.map((r) => r.busy), refreshes: rotation.refreshes, refusedModelCalls: rotation.refused, loginNow: login.tokens.refresh_token })}\n`);
    return { runs, refreshes: [...rotation.refreshes], refused: rotation.refused, login };
  } finally {
    await rotation.close();
  }
}

describe('codex: five parallel runs on one ChatGPT login whose refresh token rotates (real CLI, stub token endpoint)', () => {
  it('serialised: all five succeed; no refresh token is ever presented twice; the login ends holding the newest', async () => {
    const { runs, refreshes, login } = await fiveParallelCodexRuns(true);
    expect(runs.map((r) => r.result.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(runs.map((r) => r.result.auth_mode)).toEqual(Array(5).fill('subscription'));
    expect(refreshes.length).toBeGreaterThanOrEqual(1);
    expect(refreshes.every((r) => r.ok)).toBe(true);
    // A linear chain: generation k presents rt-(k-1), never a spent one.
    expect(refreshes.map((r) => r.token)).toEqual(refreshes.map((_, k) => `rt-${k}-single-use`));
    expect(login.tokens.refresh_token).toBe(`rt-${refreshes.length}-single-use`);
    expect(runs.reduce((n, r) => n + r.busy, 0)).toBeGreaterThanOrEqual(1);
  }, 600_000);

  it('control, without serialize: the runs log each other out (one refresh wins, the rest are refused as reused)', async () => {
    const { runs, refreshes, login } = await fiveParallelCodexRuns(false);
    const succeeded = runs.filter((r) => r.result.outcome === 'succeeded').length;
    expect(succeeded).toBeLessThan(5);
    expect(refreshes.filter((r) => r.ok).map((r) => r.token)).toEqual(['rt-0-single-use']);
    expect(refreshes.filter((r) => !r.ok).length).toBeGreaterThanOrEqual(4);
    expect(refreshes.every((r) => r.token === 'rt-0-single-use')).toBe(true);
    expect(runs.every((r) => r.busy === 0)).toBe(true);
    // Nothing written back: the login still holds the spent token.
    expect(login.tokens.refresh_token).toBe('rt-0-single-use');
  }, 600_000);
});
