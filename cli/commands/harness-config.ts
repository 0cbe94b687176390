// `tcab harness-config get|set`: the dispatcher's HTTP API from the command line. get needs the read token (or the
// write token, which reads too: --token-file, TCAB_API_READ_TOKEN, TCAB_API_TOKEN); set needs the write token
// (--token-file, or TCAB_API_TOKEN). A token is never taken as a flag value, so it stays out of shell history.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidInputError } from '../../shared/errors.ts';
import { InfrastructureError } from '../../shared/exit-codes.ts';

interface Common {
  url: string;
}

/** The API base URL, checked: a value that is not an http(s) URL is the caller's mistake (exit 2). */
function apiBase(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed && (parsed.username || parsed.password)) {
    throw new InvalidInputError('--url', 'must not carry a user or password (the API takes a bearer token: --token-file or TCAB_API_TOKEN)');
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new InvalidInputError('--url', `"${url}" is not an http(s) URL of the dispatcher API (e.g. http://127.0.0.1:8080)`);
  return url.replace(/\/+$/, '');
}

/** The token get reads with: --token-file, else TCAB_API_READ_TOKEN, else TCAB_API_TOKEN; none in an open install. */
export function readTokenOf(tokenFile: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (tokenFile) return readFileSync(tokenFile, 'utf8').trim() || undefined;
  return env.TCAB_API_READ_TOKEN || env.TCAB_API_TOKEN || undefined;
}

async function call(url: string, init: RequestInit = {}): Promise<unknown> {
  const what = `${init.method ?? 'GET'} ${url}`;
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
    throw new InfrastructureError(`cannot reach the dispatcher API (${what}): ${(error as Error).message}${cause}`, { cause: error });
  }
  const body = (await response.json().catch(() => ({}))) as { error?: string };
  const detail = `HTTP ${response.status}: ${body.error ?? response.statusText}`;
  // 4xx: the request was wrong (slug, limit, token); 5xx: the dispatcher failed.
  if (response.status >= 500) throw new InfrastructureError(`${what}: ${detail}`);
  const hint = response.status === 401 && !new Headers(init.headers).has('authorization') ? ' (no token was sent: set TCAB_API_READ_TOKEN or TCAB_API_TOKEN, or pass --token-file)' : '';
  if (!response.ok) throw new InvalidInputError(`${init.method ?? 'GET'} ${new URL(url).pathname}`, `${detail}${hint}`);
  return body;
}

export function parseLimit(value: string): number | null {
  if (value === 'unlimited') return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidInputError('limit', `must be a non-negative integer or "unlimited", got "${value}"`);
  return n;
}

export function registerHarnessConfigCommands(program: Command): void {
  const group = program
    .command('harness-config')
    .description("per-harness settings through the dispatcher's HTTP API (max parallelism)")
    .option('--url <url>', 'the dispatcher API', process.env.TCAB_DISPATCHER_URL ?? 'http://127.0.0.1:8080');
  group
    .command('get')
    .description('every harness with its max parallelism (or the default)')
    .option('--json', 'print JSON')
    .option('--token-file <file>', 'file holding the read (or write) token (default: TCAB_API_READ_TOKEN, else TCAB_API_TOKEN)')
    .action(async (options: { json?: boolean; tokenFile?: string }) => {
      const { url } = group.opts<Common>();
      const token = readTokenOf(options.tokenFile, process.env);
      const configs = (await call(`${apiBase(url)}/harness-config`, token ? { headers: { authorization: `Bearer ${token}` } } : {})) as { slug: string; maxParallelism: number | null; default: boolean }[];
      if (options.json) {
        process.stdout.write(`${JSON.stringify(configs, null, 2)}\n`);
        return;
      }
      for (const c of configs) process.stdout.write(`${c.slug.padEnd(12)} ${String(c.maxParallelism ?? 'unlimited').padEnd(10)} ${c.default ? '(default)' : ''}\n`);
    });
  group
    .command('set')
    .description('set a harness max parallelism: a number (0 pauses it) or "unlimited"')
    .argument('<slug>')
    .argument('<limit>')
    .option('--token-file <file>', 'file holding the API bearer token (default: TCAB_API_TOKEN)')
    .action(async (slug: string, limit: string, options: { tokenFile?: string }) => {
      const { url } = group.opts<Common>();
      const maxParallelism = parseLimit(limit);
      const token = options.tokenFile ? readFileSync(options.tokenFile, 'utf8').trim() : process.env.TCAB_API_TOKEN;
      if (!token) throw new InvalidInputError('token', 'set TCAB_API_TOKEN or pass --token-file');
      const saved = (await call(`${apiBase(url)}/harness-config/${encodeURIComponent(slug)}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ maxParallelism }) })) as { maxParallelism: number | null };
      process.stdout.write(`${slug}: max parallelism ${saved.maxParallelism ?? 'unlimited'}\n`);
    });
}
