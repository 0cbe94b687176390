// `tcab export atif` of a cluster Run's attempts, against a real nats-server: the last attempt is exported; when the
// last result is one another attempt may follow and none comes within --next-attempt-timeout, that result stands.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attemptStreamPerFile } from '../../test/support/run-attempts.ts';
import type { AtifTrajectory } from '../../export/atif/schema.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const perFile = attemptStreamPerFile();

function tcab(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { timeout: 60_000 }, (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

const messages = (stdout: string) => (JSON.parse(stdout) as AtifTrajectory).steps.map((s) => s.message);

describe('tcab export atif across attempts', () => {
  it('exports the last attempt, read past the earlier one\'s retryable result', async () => {
    const runId = 'ns_export-two-attempts';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    await perFile.publisher().attempt(runId, 2, 3, 'succeeded', false);
    const out = await tcab(['export', 'atif', runId, '--nats', perFile.server().url, '--next-attempt-timeout', '1']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(messages(out.stdout)).toEqual(['attempt 2 event 1', 'attempt 2 event 2']);
  });

  it('no attempt after a retryable attempt 1 of 3 within the bound: attempt 1 is exported, with a warning', async () => {
    const runId = 'ns_export-no-next';
    await perFile.publisher().attempt(runId, 1, 3, 'infrastructure_failed', true);
    const out = await tcab(['export', 'atif', runId, '--nats', perFile.server().url, '--next-attempt-timeout', '1']);
    expect(out.stderr).toBe(`tcab: run ${runId}: no attempt after attempt 1 of 3 within 1 s; the last result stands\n`);
    expect(out.code).toBe(0);
    // Attempt 1's events, and its outcome as the trajectory's last step (the result's message is empty here).
    expect(messages(out.stdout)).toEqual(['attempt 1 event 1', 'attempt 1 event 2', 'run infrastructure_failed: ']);
    expect(JSON.parse(out.stdout)).toMatchObject({ trajectory_id: runId });
  });
});
