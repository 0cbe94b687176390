// A failed run names the stage that was actually running, and an invalid spec is refused before anything runs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunSpec } from '../shared/run.ts';
import { listHarnesses } from '../harnesses/registry.ts';
import { createScriptedHarness } from '../test/support/scripted-harness.ts';
import type { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { executeRun } from './run.ts';
import { resolveRunUser } from './run-user.ts';
import { MemorySink } from './sinks/sink.ts';
import { jsonLines } from '../test/support/log-lines.ts';

const ROOT = join(import.meta.dirname, '..');
let base: string;
let harness: ScriptedHarness;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-failure-stage-'));
  harness = createScriptedHarness();
});
afterAll(() => {
  harness.dispose();
  rmSync(base, { recursive: true, force: true });
});

async function failedRun(env: Record<string, string>, harnessesRoot = harness.root) {
  const sink = new MemorySink();
  const result = await executeRun(RunSpec.parse({ harness: 'scripted', model: 'claude-sonnet-4-5', prompt: 'plain' }), {
    runId: 'failure-stage',
    env: { PATH: process.env.PATH, TCAB_RUN_ROOT: base, ...env },
    sinks: [sink],
    user: resolveRunUser({}, process.getuid!()),
    credentialSource: { kind: 'home', home: join(base, 'no-home') },
    harnessesRoot,
  });
  const errors = sink.events.map((e) => e.event).filter((e) => e.type === 'error');
  return { result, errors };
}

describe('where a run failed', () => {
  it('finding 11: a fault outside auth is not reported as auth_failed: a broken adapter is driver_failed', async () => {
    const broken = createScriptedHarness();
    writeFileSync(join(broken.root, 'scripted', 'adapter.ts'), 'export const notAnAdapter = 1;\n');
    const { result, errors } = await failedRun({ ANTHROPIC_API_KEY: 'sk-ant-fake-canary-stage' }, broken.root).finally(() => broken.dispose());
    expect(result.outcome).toBe('infrastructure_failed');
    expect(errors).toEqual([expect.objectContaining({ code: 'driver_failed', message: expect.stringContaining('adapter.ts: must default-export a function') })]);
  });

  it('real auth failures keep their code: no credentials, and an invalid auth mode setting, are auth_failed', async () => {
    const missing = await failedRun({});
    expect(missing.errors).toEqual([expect.objectContaining({ code: 'auth_failed', message: expect.stringContaining('Scripted CLI is not available') })]);
    const invalid = await failedRun({ TCAB_AUTH_MODE_SCRIPTED: 'oauth' });
    expect(invalid.errors).toEqual([expect.objectContaining({ code: 'auth_failed', message: expect.stringContaining('TCAB_AUTH_MODE_SCRIPTED') })]);
  });
});

function driver(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'driver/main.ts')], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (_error, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

describe('tcab-driver refuses invalid input before doing anything (exit 2)', () => {
  it('finding 11: an unknown harness names `harness` and the known slugs, and nothing is installed', async () => {
    const runRoot = join(base, 'driver-unknown');
    const { code, stdout, stderr } = await driver({ TCAB_RUN_ID: 'unknown-harness', TCAB_RUN_ROOT: runRoot, TCAB_RUN_SPEC: JSON.stringify({ harness: 'nope', model: 'm', prompt: 'x' }) });
    expect(code).toBe(2);
    const known = listHarnesses().map((h) => h.manifest.slug).join(', ');
    expect(known).toMatch(/\bgg\b/);
    // One pino line on stderr (stdout is the event stream): the run id was valid, so it is bound.
    expect(jsonLines(stderr)).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', runId: 'unknown-harness', variable: 'run spec', msg: `run spec: harness: "nope" is not a harness (known: ${known})` })]);
    expect(stdout).toBe('');
    expect(existsSync(runRoot)).toBe(false);
  });

  it('finding 11: an invalid setting outside the spec (TCAB_RUN_UID) is a usage error naming it, not exit 1 (harness failed)', async () => {
    const { code, stderr } = await driver({ TCAB_RUN_ID: 'bad-uid', TCAB_RUN_ROOT: join(base, 'driver-uid'), TCAB_RUN_UID: 'abc', TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'm', prompt: 'x' }) });
    expect(code).toBe(2);
    expect(jsonLines(stderr)).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', runId: 'bad-uid', variable: 'TCAB_RUN_UID', msg: 'TCAB_RUN_UID: must be a positive integer uid/gid (not root), got "abc"' })]);
  });

  it('a run attempt that is not a header-safe id (a newline in TCAB_RUN_ATTEMPT) is a usage error naming it', async () => {
    const runRoot = join(base, 'driver-attempt');
    const { code, stderr } = await driver({ TCAB_RUN_ID: 'bad-attempt', TCAB_RUN_ROOT: runRoot, TCAB_RUN_ATTEMPT: 'uid\r\nNats-Msg-Id: forged', TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'm', prompt: 'x' }) });
    expect(code).toBe(2);
    const lines = jsonLines(stderr);
    expect(lines).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', runId: 'bad-attempt', variable: 'TCAB_RUN_ATTEMPT', msg: 'TCAB_RUN_ATTEMPT: "uid\\r\\nNats-Msg-Id: forged" is not a run attempt: an attempt is 1-200 characters of letters, digits, "-" and "_", starting with a letter or digit' })]);
    expect(stderr.split('\n')).toHaveLength(2); // one line: the CR LF stays escaped inside the JSON string
    expect(existsSync(runRoot)).toBe(false);
  });

  it('TCAB_LOG_LEVEL sets the level of its lines (silent: none, the exit code still says it); a bad level is named', async () => {
    const spec = JSON.stringify({ harness: 'nope', model: 'm', prompt: 'x' });
    const silent = await driver({ TCAB_RUN_ID: 'log-silent', TCAB_RUN_ROOT: join(base, 'driver-log'), TCAB_LOG_LEVEL: 'silent', TCAB_RUN_SPEC: spec });
    expect(silent).toMatchObject({ code: 2, stderr: '', stdout: '' });
    const loud = await driver({ TCAB_RUN_ID: 'log-loud', TCAB_RUN_ROOT: join(base, 'driver-log'), TCAB_LOG_LEVEL: 'loud', TCAB_RUN_SPEC: spec });
    expect(loud.code).toBe(2);
    expect(jsonLines(loud.stderr)).toEqual([expect.objectContaining({ level: 'error', runId: 'log-loud', variable: 'TCAB_LOG_LEVEL', msg: 'TCAB_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"' })]);
  });

  it('a bad NATS setting (nats/settings.ts) is a usage error logged as this run\'s line, before anything runs', async () => {
    const runRoot = join(base, 'driver-nats');
    const { code, stdout, stderr } = await driver({ TCAB_RUN_ID: 'bad-nats', TCAB_RUN_ROOT: runRoot, TCAB_NATS_URL: ' , ', TCAB_RUN_SPEC: JSON.stringify({ harness: 'claude', model: 'm', prompt: 'x' }) });
    expect(code).toBe(2);
    expect(jsonLines(stderr)).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', runId: 'bad-nats', harness: 'claude', variable: 'TCAB_NATS_URL', msg: expect.stringMatching(/^TCAB_NATS_URL: /) })]);
    expect(stdout).toBe('');
    expect(existsSync(runRoot)).toBe(false);
  });

  it('a spec file that cannot be read, or is not JSON, is a usage error naming TCAB_RUN_SPEC_FILE; a valid one runs its spec', async () => {
    const missing = join(base, 'no-such-spec.json');
    const unreadable = await driver({ TCAB_RUN_ID: 'spec-file-missing', TCAB_RUN_ROOT: join(base, 'driver-spec-file'), TCAB_RUN_SPEC_FILE: missing });
    expect(unreadable.code).toBe(2);
    expect(jsonLines(unreadable.stderr)).toEqual([expect.objectContaining({ level: 'error', runId: 'spec-file-missing', variable: 'TCAB_RUN_SPEC_FILE', msg: expect.stringMatching(/^TCAB_RUN_SPEC_FILE: cannot read .*no-such-spec\.json: ENOENT/) })]);
    const notJson = join(base, 'not-json.json');
    writeFileSync(notJson, '{harness');
    const bad = await driver({ TCAB_RUN_ID: 'spec-file-bad', TCAB_RUN_ROOT: join(base, 'driver-spec-file'), TCAB_RUN_SPEC_FILE: notJson });
    expect(bad.code).toBe(2);
    expect(jsonLines(bad.stderr)).toEqual([expect.objectContaining({ variable: 'TCAB_RUN_SPEC_FILE', msg: expect.stringMatching(/^TCAB_RUN_SPEC_FILE: not valid JSON: /) })]);
    const unknown = join(base, 'unknown-harness.json');
    writeFileSync(unknown, JSON.stringify({ harness: 'nope', model: 'm', prompt: 'x' }));
    const parsed = await driver({ TCAB_RUN_ID: 'spec-file-read', TCAB_RUN_ROOT: join(base, 'driver-spec-file'), TCAB_RUN_SPEC_FILE: unknown });
    expect(parsed.code).toBe(2); // the file was read and decoded: its harness is what is refused
    expect(jsonLines(parsed.stderr)).toEqual([expect.objectContaining({ variable: 'run spec', msg: expect.stringMatching(/^run spec: harness: "nope" is not a harness/) })]);
    expect(existsSync(join(base, 'driver-spec-file'))).toBe(false);
  });

  it('finding 11: a NUL in a field that becomes argv or env is an invalid spec naming each field', async () => {
    const spec = { harness: 'claude', model: 'claude\u0000x', prompt: 'x', continuePrompt: 'go\u0000', testCase: { init: 'make\u0000' } };
    const { code, stderr } = await driver({ TCAB_RUN_ID: 'nul-spec', TCAB_RUN_ROOT: join(base, 'driver-nul'), TCAB_RUN_SPEC: JSON.stringify(spec) });
    expect(code).toBe(2);
    const nul = 'must not contain a NUL character (\\0): it cannot be passed to a process';
    expect(jsonLines(stderr)).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', runId: 'nul-spec', variable: 'run spec', msg: `run spec: model: ${nul}; testCase.init: ${nul}; continuePrompt: ${nul}` })]);
  });
});
