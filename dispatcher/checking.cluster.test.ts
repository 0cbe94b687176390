// The Run's phase while its test case's check runs (issue 39), against the test control plane, a real nats-server
// and a real gg driver Pod on the real node: the driver sends its progress message as the check starts, the
// dispatcher makes the Run Checking (phase and condition) while that Pod runs, and the result ends it. The check
// waits for a file the test writes into the Pod's workspace once it has seen Checking, so the phase is observed
// while the check runs, not guessed from timing. A Run without a check never shows Checking.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, waitFor } from '../test/cluster/support.ts';
import type { RunObject } from '../kube/resources.ts';
import { startDispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';
import type { DispatcherFixture } from '../test/cluster/dispatcher-fixture.ts';
import { POD_RUN_ROOT } from './pods/driver-pod.ts';

let fixture: DispatcherFixture;

beforeAll(async () => {
  fixture = await startDispatcherFixture('checking');
});

afterAll(async () => {
  await fixture?.stop();
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${fixture.ns}/runs`;
const apply = async (name: string, spec: Record<string, unknown>) => {
  const run = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120, ...spec } };
  const out = await kubectl(['apply', '-n', fixture.ns, '-f', '-'], JSON.stringify(run));
  expect(out.code, out.stderr).toBe(0);
};
const runWhere = async (name: string, done: (run: RunObject) => boolean, timeoutMs = 150_000) => {
  const [run] = await waitFor<RunObject>(runsPath(), (all) => all.some(done), timeoutMs, { fieldSelector: `metadata.name=${name}` });
  return run!;
};
const FINAL = ['Succeeded', 'Failed', 'Cancelled'];

describe('the Checking phase', () => {
  it('is the Run\'s phase while its check runs, after Running and before the end; the condition stays in the final status', async () => {
    // The check waits for `go` in its workspace: only the test, having seen Checking, writes it.
    await apply('judged', { testCase: { check: { command: 'while [ ! -e go ]; do sleep 0.1; done; echo checked', timeoutSeconds: 120 } } });
    const phases: string[] = [];
    const checking = await runWhere('judged', (r) => {
      const phase = r.status?.phase;
      if (phase && phases.at(-1) !== phase) phases.push(phase);
      return phase === 'Checking' || FINAL.includes(phase ?? '');
    });
    expect(checking.status?.phase, `${JSON.stringify(checking.status)}\n${fixture.logs.slice(-30).join('\n')}`).toBe('Checking');
    expect(checking.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Checking', status: 'True', reason: 'CheckStarted' }));
    // The Run started (Running, or Checking seen first) before its check did.
    const checkStarted = checking.status!.conditions!.find((c) => c.type === 'Checking')!.lastTransitionTime;
    expect(Date.parse(checking.status!.startTime!)).toBeLessThanOrEqual(Date.parse(checkStarted));
    // Every phase seen moved forward, Checking last so far.
    expect(phases.at(-1)).toBe('Checking');
    expect(phases.map((p) => ['Pending', 'Dispatched', 'Starting', 'Running', 'Checking'].indexOf(p))).toEqual(phases.map((p) => ['Pending', 'Dispatched', 'Starting', 'Running', 'Checking'].indexOf(p)).toSorted((a, b) => a - b));

    const workspace = `${POD_RUN_ROOT}/runs/${fixture.ns}_judged/workspace`;
    const touched = await kubectl(['exec', '-n', fixture.ns, checking.status!.pod!, '-c', 'driver', '--', '/bin/sh', '-c', `touch ${workspace}/go`]);
    expect(touched.code, touched.stderr).toBe(0);

    const done = await runWhere('judged', (r) => FINAL.includes(r.status?.phase ?? ''));
    expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', check: { passed: true, exitCode: 0 } });
    const condition = done.status!.conditions!.find((c) => c.type === 'Checking')!;
    expect(Date.parse(condition.lastTransitionTime)).toBeLessThanOrEqual(Date.parse(done.status!.completionTime!));
    const events = JSON.parse((await kubectl(['get', 'events', '-n', fixture.ns, '--field-selector', 'involvedObject.name=judged', '-o', 'json'])).stdout) as { items: { reason: string }[] };
    expect(events.items.map((e) => e.reason)).toContain('Checking');
  });

  it('never shows on a Run without a check: Running, then its end', async () => {
    await apply('unchecked', {});
    const phases: string[] = [];
    const done = await runWhere('unchecked', (r) => {
      const phase = r.status?.phase;
      if (phase && phases.at(-1) !== phase) phases.push(phase);
      return FINAL.includes(phase ?? '');
    });
    expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
    expect(phases).not.toContain('Checking');
    expect(done.status?.conditions?.some((c) => c.type === 'Checking')).toBe(false);
  });
});
