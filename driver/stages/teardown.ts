// teardown: the run's processes are already reaped group by group (runProcess); what escaped its group (a daemon
// in its own session) is found by the run's HOME in its environment and killed. Then the run user's HOME
// (including credential copies the CLI refreshed), the workspace and the install prefix are removed unless the
// user asked to keep them for inspection: only the run's own directory, never through a symlink (run-dirs.ts).
import { killRunLeftovers } from '../leftovers.ts';
import { removeRunDirs } from '../run-dirs.ts';
import { stage } from './context.ts';
import type { StageContext } from './context.ts';

export async function teardown(ctx: StageContext, keep: boolean): Promise<void> {
  await stage(ctx, 'teardown', keep ? 'keeping the run directories' : 'removing the run directories', async () => {
    const leftovers = await killRunLeftovers(ctx.dirs.home, ctx.user);
    const listed = leftovers.map((p) => `${p.name} (${p.pid})`).join(', ');
    const killed = leftovers.length > 0 ? `; killed ${leftovers.length} process(es) the harness left running: ${listed}` : '';
    if (killed) ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message: `the harness left ${leftovers.length} process(es) running after its session, killed: ${listed}`, code: 'leftover_processes' });
    if (!keep) await removeRunDirs(ctx.dirs);
    const removed = keep ? `kept ${ctx.dirs.root}${ctx.dirs.prefixRoot ? ` and ${ctx.dirs.prefix}` : ''}` : 'run home, workspace and install prefix removed';
    return { value: undefined, message: `${removed}${killed}; ${driverPeakRss()}` };
  });
}

/** The driver process's own peak memory (never the harness's: its own processes): what a run costs beside it. */
function driverPeakRss(): string {
  return `the driver's peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`;
}
