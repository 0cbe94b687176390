// Who runs the harness. A driver started as root (a workstation `sudo`, CI, the driver Pod) drops to a
// configured unprivileged uid/gid: Claude Code refuses permission bypass as root, a harness must never hold more
// rights than the run needs, and a uid of its own keeps the harness out of the driver's environment, memory,
// signals and root-only files (its NATS credential). A driver that is already unprivileged (a plain `tcab run`)
// runs it as itself.
import { parseDriverEnvFields } from '../shared/driver-env.ts';
import type { DriverSettings } from '../shared/driver-env.ts';
import type { RunUser } from './process.ts';

export const DEFAULT_RUN_UID = 1000;

/** The run user from the settings (TCAB_RUN_UID/TCAB_RUN_GID, checked by the driver env schema). */
export function runUserFor(settings: Pick<DriverSettings, 'TCAB_RUN_UID' | 'TCAB_RUN_GID'>, currentUid: number): RunUser {
  if (currentUid !== 0) return {};
  const uid = settings.TCAB_RUN_UID ?? DEFAULT_RUN_UID;
  const gid = settings.TCAB_RUN_GID ?? uid;
  return { uid, gid };
}

/** For callers holding an environment rather than settings (`tcab run`, tests): the same fields, parsed. */
export function resolveRunUser(env: Readonly<Record<string, string | undefined>>, currentUid: number): RunUser {
  return runUserFor(parseDriverEnvFields(env, ['TCAB_RUN_UID', 'TCAB_RUN_GID']), currentUid);
}
