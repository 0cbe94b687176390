// The cluster's npm cache serves harness installs only (issue 33): it answers nobody without its install
// credential, so an agent in a run cannot make it fetch any package it likes. The driver holds the credential
// (a root-only file in its Pod, TCAB_NPM_AUTH_FILE) and hands it to npm for the two stages that ask the registry
// (resolving the newest release, installing it) as a user config file in the run's TMPDIR that exists only while
// those npm processes run: the session that follows, and anything the agent starts, never sees it. The value is
// scrubbed from every event like every other secret the driver holds.
import { unlink } from 'node:fs/promises';
import { ConfinementError, HeldDir, replaceFileIn } from '../confined-fs.ts';
import type { StageContext } from './context.ts';

const FILE = '.tcab-install.npmrc';

/** npm's per-registry credential line (its "nerf dart": the registry URL without its scheme). */
export function npmrcWithAuth(registry: string, auth: string): string {
  const url = new URL(registry);
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  if (/[\r\n]/.test(auth)) throw new Error('the npm cache credential must be one line');
  return `//${url.host}${path}:_auth=${auth}\n`;
}

/**
 * Runs `fn` with the environment that points npm at the credential (nothing without one). The file is written as
 * root into the run user's TMPDIR without following anything the run user may have put there (confined-fs) and is
 * removed when `fn` settles, whatever happened.
 */
export async function withNpmAuth<T>(ctx: Pick<StageContext, 'dirs' | 'user' | 'npmRegistry' | 'npmAuth'>, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  if (!ctx.npmAuth) return fn({});
  const content = npmrcWithAuth(ctx.npmRegistry, ctx.npmAuth);
  const dir = await HeldDir.open(ctx.dirs.tmp, { follow: false }).catch((error: unknown) => {
    throw error instanceof ConfinementError ? error : new Error(`cannot open the run's TMPDIR for npm's credential: ${(error as Error).message}`, { cause: error });
  });
  try {
    await replaceFileIn(dir, FILE, 0o400, ctx.user, async (handle) => void (await handle.writeFile(content)));
    try {
      // npm reads its user config from here instead of HOME/.npmrc: the run user's own settings do not apply to
      // the install either (an agent that ran before a second session cannot redirect it).
      return await fn({ npm_config_userconfig: `${ctx.dirs.tmp}/${FILE}` });
    } finally {
      await unlink(dir.at(FILE)).catch(() => undefined);
    }
  } finally {
    await dir.close();
  }
}

/** What the scrubber must know of the credential: the `_auth` value and the password inside it (user:password). */
export function npmAuthSecrets(auth: string | undefined): string[] {
  if (!auth) return [];
  const decoded = Buffer.from(auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return [auth, ...(colon >= 0 ? [decoded.slice(colon + 1)] : [])];
}
