// Who runs the harness. A driver started as root (a workstation `sudo`, CI) drops to a
// configured unprivileged uid/gid: Claude Code refuses permission bypass as root, and a harness must never hold
// more rights than the run needs. A driver that is already unprivileged (the Pod: uid 1000) runs it as itself.
import { InvalidInputError } from '../shared/errors.ts';
import type { RunUser } from './process.ts';

export const DEFAULT_RUN_UID = 1000;

function idFrom(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new InvalidInputError(name, `must be a positive integer uid/gid (not root), got "${raw}"`);
  return n;
}

export function resolveRunUser(env: Readonly<Record<string, string | undefined>>, currentUid: number): RunUser {
  if (currentUid !== 0) return {};
  const uid = idFrom(env, 'TCAB_RUN_UID') ?? DEFAULT_RUN_UID;
  const gid = idFrom(env, 'TCAB_RUN_GID') ?? uid;
  return { uid, gid };
}
