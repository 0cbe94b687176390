// `tcab harness-config` against a real HTTP server on 127.0.0.1: the exit code follows from whose fault it is.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSING_PORT } from '../../test/support/nats-server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let server: Server;
let base: string;
beforeAll(async () => {
  // /broken answers 500 (the dispatcher failed), anything else 400 (the request was wrong).
  server = createServer((req, res) => {
    res.writeHead(req.url?.startsWith('/broken') ? 500 : 400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: req.url?.startsWith('/broken') ? 'etcd unavailable' : 'maxParallelism: must be an integer' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function tcab(args: string[], env: Record<string, string> = { TCAB_API_TOKEN: 'sk-fake-canary-api-token' }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), 'harness-config', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (_e, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

describe('tcab harness-config errors', () => {
  it('finding 11: an unreachable dispatcher names the URL and exits 3, as does a dispatcher fault (5xx); a rejected request (4xx) or a bad --url exits 2', async () => {
    const port = REFUSING_PORT;
    const unreachable = await tcab(['--url', `http://127.0.0.1:${port}`, 'get']);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(new RegExp(`^tcab: cannot reach the dispatcher API \\(GET http://127\\.0\\.0\\.1:${port}/harness-config\\): fetch failed: .*ECONNREFUSED`));
    // fetch refuses URLs with credentials and repeats them in its message: refused here, without echoing them.
    const withPassword = await tcab(['--url', `http://admin:sk-fake-canary-pw@127.0.0.1:${port}`, 'get']);
    expect(withPassword).toEqual({ code: 2, stdout: '', stderr: 'tcab: --url: must not carry a user or password (the API takes a bearer token: --token-file or TCAB_API_TOKEN)\n' });
    const broken = await tcab(['--url', `${base}/broken`, 'get']);
    expect(broken).toEqual({ code: 3, stdout: '', stderr: `tcab: GET ${base}/broken/harness-config: HTTP 500: etcd unavailable\n` });
    const rejected = await tcab(['--url', base, 'set', 'claude', '2']);
    expect(rejected).toEqual({ code: 2, stdout: '', stderr: 'tcab: POST /harness-config/claude: HTTP 400: maxParallelism: must be an integer\n' });
    const notUrl = await tcab(['--url', 'dispatcher:8080', 'get']);
    expect(notUrl).toEqual({ code: 2, stdout: '', stderr: 'tcab: --url: "dispatcher:8080" is not an http(s) URL of the dispatcher API (e.g. http://127.0.0.1:8080)\n' });
  });
});

describe('tcab harness-config get reads with the read token (issue 33)', () => {
  it('sends TCAB_API_READ_TOKEN, else TCAB_API_TOKEN, as the bearer; without either a 401 says what to set', async () => {
    const seen: (string | undefined)[] = [];
    const api = createServer((req, res) => {
      seen.push(req.headers.authorization);
      const ok = req.headers.authorization === 'Bearer fake-read' || req.headers.authorization === 'Bearer fake-write';
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? [{ slug: 'gg', maxParallelism: 2, default: false }] : { error: 'a read credential is required' }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const address = api.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      expect(await tcab(['--url', url, 'get'], { TCAB_API_READ_TOKEN: 'fake-read', TCAB_API_TOKEN: 'fake-write' })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^gg +2 /) });
      expect(await tcab(['--url', url, 'get', '--json'], { TCAB_API_TOKEN: 'fake-write' })).toMatchObject({ code: 0 });
      const refused = await tcab(['--url', url, 'get'], {});
      expect(refused).toEqual({ code: 2, stdout: '', stderr: 'tcab: GET /harness-config: HTTP 401: a read credential is required (no token was sent: set TCAB_API_READ_TOKEN or TCAB_API_TOKEN, or pass --token-file)\n' });
      expect(seen).toEqual(['Bearer fake-read', 'Bearer fake-write', undefined]);
    } finally {
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  });
});
