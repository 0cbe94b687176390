// init_test_case: the workspace is seeded from the test case and its init command runs as the run user; the
// check's files from git, if any, are fetched (kept from the agent). Reported only when the run defines a test case
// (spec). Entries the copy skipped (see test-case.ts) are a warning.
import type { TestCase } from '../../shared/run.ts';
import { runProcess } from '../process.ts';
import { seedWorkspace, skippedMessage } from '../test-case.ts';
import { OutputTail, StageFailure, stage } from './context.ts';
import type { StageContext } from './context.ts';
import { fetchCheckFiles } from '../run/check-files.ts';
import type { FetchedCheckFiles } from '../run/check-files.ts';

/**
 * The workspace seeded, the init command run, and the check's files from git fetched (check-files.ts): those are
 * returned, kept from the agent until the check.
 */
export async function initTestCase(ctx: StageContext, testCase: TestCase): Promise<FetchedCheckFiles | undefined> {
  return stage(ctx, 'init_test_case', `preparing the workspace${testCase.init ? ' and running the init command' : ''}`, async () => {
    const env = { ...ctx.baseEnv };
    const { message, skipped } = await seedWorkspace(testCase, { workspace: ctx.dirs.workspace, user: ctx.user, env, deadline: ctx.deadline });
    let seeded = skipped.length > 0 ? `${message}; skipped ${skipped.length} entr${skipped.length === 1 ? 'y' : 'ies'}` : message;
    if (skipped.length > 0) ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message: skippedMessage(skipped), code: 'test_case_entries_skipped' });
    const from = testCase.check?.filesFrom;
    const checkFiles = from ? await fetchCheckFiles(ctx, from) : undefined;
    if (from && checkFiles) {
      seeded += `; fetched the check's ${checkFiles.files.length} file(s) from ${from.git.url} at ${checkFiles.commit} (kept from the agent until the check)`;
      if (checkFiles.skipped.length > 0) ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message: `the check's files: not regular files, left out: ${checkFiles.skipped.slice(0, 5).join(', ')}${checkFiles.skipped.length > 5 ? ` and ${checkFiles.skipped.length - 5} more` : ''}`, code: 'test_case_entries_skipped' });
    }
    if (!testCase.init) return { value: checkFiles, message: seeded };
    const tail = new OutputTail();
    const outcome = await runProcess({
      argv: ['/bin/sh', '-c', testCase.init],
      cwd: ctx.dirs.workspace,
      env,
      user: ctx.user,
      deadline: ctx.deadline,
      signal: ctx.signal,
      onStdout: tail.add,
      onStderr: tail.add,
    });
    if (outcome.cancelled) throw new StageFailure('init_test_case', 'cancelled', 'init cancelled');
    if (outcome.timedOut) throw new StageFailure('init_test_case', 'timeout', `init command did not finish within the run's maximum runtime`);
    if (outcome.code !== 0) {
      throw new StageFailure('init_test_case', 'infrastructure', `init command failed (exit ${outcome.code ?? outcome.signal}): ${tail.text() || 'no output'}`);
    }
    return { value: checkFiles, message: `${seeded}; init command succeeded` };
  });
}
