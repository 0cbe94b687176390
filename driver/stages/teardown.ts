// teardown: the run's processes are already reaped group by group (runProcess); here the run user's HOME
// (including credential copies the CLI refreshed), the workspace and the install prefix are removed unless the
// user asked to keep them for inspection.
import { removeRunDirs } from '../run-dirs.ts';
import { stage } from './context.ts';
import type { StageContext } from './context.ts';

export async function teardown(ctx: StageContext, keep: boolean): Promise<void> {
  await stage(ctx, 'teardown', keep ? 'keeping the run directories' : 'removing the run directories', async () => {
    if (keep) return { value: undefined, message: `kept ${ctx.dirs.root}` };
    await removeRunDirs(ctx.dirs);
    return { value: undefined, message: 'run home, workspace and install prefix removed' };
  });
}
