// The test control plane itself: the apiserver's CRD validation, the controller-manager's Deployment ->
// ReplicaSet -> Pod and garbage collection, the scheduler's binding, and the real node's kubelet (containerd +
// runc) running pods as written (env from a Secret, a Secret volume at its path and mode, uid 1000, exit codes,
// Events, deadlines), read from the container's own process on the host.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { onThisNode, realNode } from './real-node-context.ts';
import { createNamespace, kubectl, waitFor } from './support.ts';

let ns: string;
let removeNs: () => Promise<void>;
beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('control-plane'));
});
afterAll(async () => removeNs());

/**
 * The host pid of a container's first process (its PID 1): the node runs containers in cgroups named by their
 * container id under its cgroup root (cgroupfs driver), and /proc/<pid>/status's NSpid ends in 1 for that one.
 */
function containerPid(containerId: string): number {
  const id = containerId.replace(/^containerd:\/\//, '');
  const find = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name === id) return join(dir, entry.name);
      const found = find(join(dir, entry.name));
      if (found) return found;
    }
    return undefined;
  };
  const cgroup = find(join('/sys/fs/cgroup/pids', realNode().cgroupRoot));
  if (!cgroup) throw new Error(`no cgroup for container ${id} under ${realNode().cgroupRoot}`);
  const pids = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const init = pids.find((pid) => /\s1$/.test(/^NSpid:.*$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[0] ?? ''));
  if (init === undefined) throw new Error(`container ${id}: no PID 1 among ${pids.join(', ')}`);
  return init;
}

const podsPath = () => `/api/v1/namespaces/${ns}/pods`;
const phaseOf = (name: string) => (pods: V1Pod[]) => pods.find((p) => p.metadata?.name === name)?.status?.phase;
const eventsOf = async (pod: string) =>
  (await waitFor<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, () => true, 5000, { fieldSelector: `involvedObject.name=${pod}` })).map((e) => e.reason);

describe('apiserver', () => {
  it('validates a CRD structural schema and names the field it rejects', async () => {
    const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.test.tcab.dev }
spec:
  group: test.tcab.dev
  scope: Namespaced
  names: { kind: Widget, plural: widgets, singular: widget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: { type: integer, minimum: 1 }
                color: { type: string, enum: [red, blue] }
`;
    expect((await kubectl(['apply', '-f', '-'], crd)).code).toBe(0);
    await kubectl(['wait', '--for=condition=Established', 'crd/widgets.test.tcab.dev', '--timeout=30s']);
    const good = await kubectl(['apply', '-n', ns, '-f', '-'], 'apiVersion: test.tcab.dev/v1\nkind: Widget\nmetadata: { name: ok }\nspec: { size: 2, color: red }\n');
    expect(good.stderr).toBe('');
    const bad = await kubectl(['apply', '-n', ns, '-f', '-'], 'apiVersion: test.tcab.dev/v1\nkind: Widget\nmetadata: { name: bad }\nspec: { size: 0, color: green }\n');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.size');
    expect(bad.stderr).toContain('spec.color');
  });
});

describe('controller-manager, scheduler and the real node\'s kubelet', () => {
  it('runs a Deployment pod as written, then garbage-collects it with its owner', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-secret', namespace: ns }, stringData: { token: 'fake-token-for-tests', 'config.json': '{"a":1}' } };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'app' } },
        template: {
          metadata: { labels: { app: 'app' } },
          spec: {
            // Its process is looked up under this node's cgroups (the suite's cluster may have more nodes).
            nodeSelector: onThisNode(),
            securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000 },
            terminationGracePeriodSeconds: 5,
            containers: [{
              name: 'main',
              image: realNode().images.busybox,
              // Always: the kubelet pulls (and says so in its Events) even when another test pulled busybox first.
              imagePullPolicy: 'Always',
              command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'],
              env: [{ name: 'APP_TOKEN', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'token' } } }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'GREETING', value: 'hello $(POD_NAME)' }],
              volumeMounts: [{ name: 'secret', mountPath: '/etc/tcab-test/secret', readOnly: true }],
            }],
            volumes: [{ name: 'secret', secret: { secretName: 'app-secret', defaultMode: 0o440 } }],
          },
        },
      },
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [secret, deployment] }))).code).toBe(0);
    const [pod] = await waitFor<V1Pod>(podsPath(), (pods) => pods.some((p) => p.status?.containerStatuses?.[0]?.ready === true), 60_000, { labelSelector: 'app=app' });
    expect(pod!.metadata!.ownerReferences![0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
    expect(pod!.spec!.nodeName).toBe(realNode().name);
    expect(pod!.status!.phase).toBe('Running');
    expect(pod!.status!.conditions!.find((c) => c.type === 'PodScheduled')!.status).toBe('True');

    // The container process itself: its uid, its environment, the Secret at its path with its mode.
    const pid = containerPid(pod!.status!.containerStatuses![0]!.containerID!);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
    // runAsGroup and fsGroup both as supplementary groups (containerd lists the primary gid there too).
    expect(status).toMatch(/^Groups:\s+1000 2000\s*$/m);
    const environ = Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    expect(environ).toMatchObject({ APP_TOKEN: 'fake-token-for-tests', POD_NAME: pod!.metadata!.name, GREETING: `hello ${pod!.metadata!.name}` });
    const inside = `/proc/${pid}/root/etc/tcab-test/secret`;
    expect(readFileSync(`${inside}/token`, 'utf8')).toBe('fake-token-for-tests');
    expect(statSync(`${inside}/token`).mode & 0o777).toBe(0o440);
    expect(statSync(`${inside}/token`).gid).toBe(2000);
    expect(readFileSync(`/proc/${pid}/mountinfo`, 'utf8')).toMatch(/ \/etc\/tcab-test\/secret ro,/);
    expect(await eventsOf(pod!.metadata!.name!)).toEqual(expect.arrayContaining(['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started']));

    // Deleting the owner: the garbage collector removes the ReplicaSet and the Pod; the kubelet stops the process.
    expect((await kubectl(['delete', '-n', ns, 'deployment', 'app', '--cascade=background', '--wait=false'])).code).toBe(0);
    await waitFor<V1Pod>(podsPath(), (pods) => pods.length === 0, 60_000, { labelSelector: 'app=app' });
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/); // no such process
    expect(await eventsOf(pod!.metadata!.name!)).toContain('Killing');
  });

  it('reports exit codes: Succeeded with 0, Failed with the code and reason', async () => {
    const pod = (name: string, script: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: realNode().images.busybox, command: ['sh', '-c', script] }] } });
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('ok', 'exit 0'), pod('fails', 'exit 3')] }));
    const pods = await waitFor<V1Pod>(podsPath(), (all) => ['ok', 'fails'].every((n) => ['Succeeded', 'Failed'].includes(phaseOf(n)(all) ?? '')), 60_000);
    const byName = (n: string) => pods.find((p) => p.metadata?.name === n)!.status!;
    expect(byName('ok').phase).toBe('Succeeded');
    expect(byName('ok').containerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(byName('fails').phase).toBe('Failed');
    expect(byName('fails').containerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it('an image the registry lacks is ErrImagePull; activeDeadlineSeconds ends a pod as DeadlineExceeded', async () => {
    const manifests = [
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'no-image', namespace: ns }, spec: { containers: [{ name: 'main', image: `${realNode().registry}/nothing:1` }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'too-long', namespace: ns }, spec: { restartPolicy: 'Never', activeDeadlineSeconds: 2, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: realNode().images.busybox, command: ['sleep', '600'] }] } },
    ];
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
    const pods = await waitFor<V1Pod>(podsPath(), (all) => phaseOf('too-long')(all) === 'Failed' && all.some((p) => p.metadata?.name === 'no-image' && p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull'), 60_000);
    const tooLong = pods.find((p) => p.metadata?.name === 'too-long')!;
    expect(tooLong.status).toMatchObject({ phase: 'Failed', reason: 'DeadlineExceeded' });
    expect(await eventsOf('no-image')).toEqual(expect.arrayContaining(['Pulling', 'Failed']));
    expect(pods.find((p) => p.metadata?.name === 'no-image')!.status!.phase).toBe('Pending');
  });
});
