// issue 21: `tcab run --harness gg --stub` as a user types it: gg is found through the registry like any harness
// (it used to fail with `unknown harness "gg"`), runs as the run user with nothing installed, and prints its events.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { runDirsFor } from '../../driver/run-dirs.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-gg-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tcab(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No key anywhere in the environment: --stub needs none. The run root is the mkdtemp directory itself, which
    // the driver opens for the run user to traverse (a directory below a private one would stay closed to it).
    const env = { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), TCAB_RUN_ROOT: dir };
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env, timeout: 90_000 }, (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

describe('tcab run --harness gg --stub', () => {
  it('runs gg on this machine against the stub model and prints its events and result', async () => {
    const resultFile = join(dir, 'result.json');
    const runId = 'gg-cli-stub';
    const { code, stdout, stderr } = await tcab(['run', '--harness', 'gg', '--stub', '--model', 'claude-sonnet-4-5', '--prompt', 'Create hello.txt', '--json', '--keep', '--run-id', runId, '--result', resultFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as HarnessEvent);
    // Nothing installed: the probe is gg's own version on the driver's Node.
    expect(events.filter((e) => e.type === 'system').map((e) => (e.type === 'system' ? `${e.stage}:${e.status}` : ''))).toEqual(['probe_harness:started', 'probe_harness:completed', 'teardown:started', 'teardown:completed']);
    const workspace = runDirsFor(dir, runId).workspace;
    expect(events.filter((e) => e.type !== 'system').map(({ timestamp: _t, ...rest }) => rest)).toEqual([
      { type: 'reasoning', message: 'The task wants a file named hello.txt; a shell command can create and show it in one go.' },
      { type: 'agent', message: 'I will create hello.txt and show its content.' },
      { type: 'command', command: "printf 'hello\\n' > hello.txt && cat hello.txt", working_directory: workspace, exit_code: 0, is_success: true, tool_name: 'shell' },
      { type: 'read', path: `${workspace}/hello.txt`, start_line: 1, end_line: 2, is_success: true, tool_name: 'read_file' },
      { type: 'agent', message: 'Created hello.txt containing "hello".' },
    ]);
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as RunResult;
    expect(result).toMatchObject({ run_id: runId, harness_slug: 'gg', harness_version: '0.1.0', outcome: 'succeeded', auth_mode: 'api-key', canonical_model: 'anthropic/claude-sonnet-4.5' });
    // Three stub calls of 900 uncached + 300 cache read + 50 cache write input and 80 output tokens.
    expect(result.tokens).toEqual({ input: 2700, cache_read: 900, cache_write: 150, output: 240, reasoning: 0 });
    // gg's shell ran as the run user, not as the driver's root.
    const expectedUid = process.getuid?.() === 0 ? 1000 : process.getuid?.();
    expect(statSync(join(workspace, 'hello.txt')).uid).toBe(expectedUid);
  });
});
