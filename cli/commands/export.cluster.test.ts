// `tcab export atif --kubeconfig` against the test cluster and a real nats-server: the stream holds no spec, so the
// prompt of a cluster run (the trajectory's user step) comes from its Run. Without --kubeconfig there is none; a Run
// deleted since, or re-created under its name, gives a warning and no prompt step; an id no Run can have, or a
// cluster that cannot be reached, is refused with a message instead of a trajectory that silently lacks its task.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { AtifTrajectory } from '../../export/atif/schema.ts';
import { natsSettings } from '../../nats/settings.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import { createNamespace, kubectl } from '../../test/cluster/support.ts';
import { agentEvent, runResult } from '../../test/support/nats-auth.ts';
import { NatsServer, REFUSING_PORT } from '../../test/support/nats-server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PROMPT = 'Make the failing test in tests/test_math.py pass.';
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let dir: string;

function tcab(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 60_000 }, (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

/** Publishes a finished run as its driver would: one agent message, then the result (under the Run's uid, as the dispatcher sets it). */
async function publishRun(runId: string, attempt?: string): Promise<void> {
  const sink = new NatsSink({ settings: natsSettings(nats.url), deliverBy: Date.now() + 30_000, warn: () => undefined, ...(attempt ? { attempt } : {}) });
  sink.event({ runId, seq: 1, event: agentEvent('The test passes now.') });
  sink.result(runResult(runId, 'done', 1));
  await sink.close();
}

const trajectoryOf = (stdout: string) => AtifTrajectory.parse(JSON.parse(stdout));

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('tcab-export'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  dir = mkdtempSync(join(tmpdir(), 'tcab-export-cluster-'));
});

afterAll(async () => {
  await nats?.dispose();
  await removeNs?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tcab export atif --kubeconfig', () => {
  it("takes the prompt from the cluster's Run, and says so when the Run is gone", async () => {
    const name = 'fix.math';
    const manifest = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: PROMPT } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(manifest))).code).toBe(0);
    const runId = clusterRunIdOf(ns, name)!;
    const uid = (await kubectl(['get', 'run', name, '-n', ns, '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
    expect(uid).not.toBe('');
    await publishRun(runId, uid);

    const withRun = await tcab(['export', 'atif', runId, '--nats', nats.url, '--kubeconfig', inject('kubeconfig')]);
    expect(withRun.stderr).toBe('');
    expect(withRun.code).toBe(0);
    const steps = trajectoryOf(withRun.stdout).steps;
    expect(steps.map((s) => [s.source, s.message])).toEqual([['user', PROMPT], ['agent', 'The test passes now.']]);

    const withoutRun = await tcab(['export', 'atif', runId, '--nats', nats.url]);
    expect(withoutRun.code).toBe(0);
    expect(trajectoryOf(withoutRun.stdout).steps.map((s) => s.source)).toEqual(['agent']);

    expect((await kubectl(['delete', 'run', name, '-n', ns, '--wait'])).code).toBe(0);
    const gone = await tcab(['export', 'atif', runId, '--nats', nats.url, '--kubeconfig', inject('kubeconfig')]);
    expect(gone.code).toBe(0);
    expect(gone.stderr).toBe(`tcab: Run ${ns}/${name} is no longer in the cluster; the trajectory has no prompt step\n`);
    expect(trajectoryOf(gone.stdout).steps.map((s) => s.source)).toEqual(['agent']);
  });

  it('never lends a run the prompt of a Run re-created under its name since', async () => {
    const name = 'again';
    const runId = clusterRunIdOf(ns, name)!;
    // The run was published under an earlier Run's uid; the Run in the cluster now is a new one with another prompt.
    await publishRun(runId, '0b7d1f3e-0000-4000-8000-00000000e41e');
    const manifest = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'A different task.' } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(manifest))).code).toBe(0);
    const exported = await tcab(['export', 'atif', runId, '--nats', nats.url, '--kubeconfig', inject('kubeconfig')]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(new RegExp(`^tcab: Run ${ns}/${name} was re-created after this run \\(uid [0-9a-f-]{36}, the run's 0b7d1f3e-0000-4000-8000-00000000e41e\\); the trajectory has no prompt step\n$`));
    expect(trajectoryOf(exported.stdout).steps.map((s) => s.source)).toEqual(['agent']);
  });

  it('refuses an id no Run can have (exit 2) and a cluster it cannot reach (exit 3), naming each', async () => {
    await publishRun('workstation-run');
    const notCluster = await tcab(['export', 'atif', 'workstation-run', '--nats', nats.url, '--kubeconfig', inject('kubeconfig')]);
    expect(notCluster.code).toBe(2);
    expect(notCluster.stderr).toContain('<run-id>: workstation-run is not the id of a cluster Run (<namespace>_<name>)');
    expect(notCluster.stdout).toBe('');

    // A kubeconfig whose apiserver port has nothing listening.
    const port = REFUSING_PORT;
    const deadConfig = join(dir, 'dead.kubeconfig');
    writeFileSync(deadConfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'dead', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: { token: 'fake-kube-token-for-tests' } }], contexts: [{ name: 'dead', context: { cluster: 'dead', user: 'u' } }], 'current-context': 'dead' }));
    const runId = clusterRunIdOf(ns, 'unreachable')!;
    await publishRun(runId);
    const unreachable = await tcab(['export', 'atif', runId, '--nats', nats.url, '--kubeconfig', deadConfig]);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain(`cannot read Run ${ns}/unreachable through the kubeconfig (context dead)`);
    expect(unreachable.stderr).not.toContain('fake-kube-token-for-tests');
    expect(unreachable.stdout).toBe('');
  });
});
