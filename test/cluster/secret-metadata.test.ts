// The dispatcher's view of Secrets on the real apiserver: the configured names arrive (list and watch), data never
// does, not even the copy `kubectl apply` keeps in the last-applied annotation; and it works under a Role that
// names those Secrets only (the chart's), with which no other Secret can be listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { secretMetadataInformer } from '../../kube/metadata-only.ts';
import type { SecretMetadataInformer } from '../../kube/metadata-only.ts';
import { clusterConfig, createNamespace, kubectl } from './support.ts';

const CANARY = 'sk-ant-fake-canary-secret-metadata-0001';
const LATER_CANARY = 'sk-ant-fake-canary-secret-metadata-0002';
let ns: string;
let removeNs: () => Promise<void>;

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('secret-meta'));
});
afterAll(async () => removeNs?.());

const applySecret = (name: string, value: string) =>
  kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { anthropic: value } }));

/** Resolves with the object once the informer reports `event` for `name`. */
const next = (informer: SecretMetadataInformer, event: 'add' | 'update', name: string) =>
  new Promise<KubernetesObject>((resolve) => informer.on(event, (object) => object.metadata?.name === name && resolve(object)));

const leaks = (value: unknown) => {
  const text = JSON.stringify(value);
  return [CANARY, LATER_CANARY].flatMap((canary) => [canary, Buffer.from(canary).toString('base64')]).filter((needle) => text.includes(needle));
};

/** A client config that authenticates as a ServiceAccount allowed list/watch on `names` only (as the chart's Role). */
async function restrictedConfig(names: string[]): Promise<KubeConfig> {
  const manifests = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'secret-reader' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: names, verbs: ['list', 'watch'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'secret-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'secret-reader', namespace: ns }] },
  ];
  expect((await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }))).code).toBe(0);
  const token = (await kubectl(['create', 'token', 'secret-reader', '-n', ns, '--duration=10m'])).stdout.trim();
  const admin = clusterConfig();
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: admin.clusters,
    users: [{ name: 'secret-reader', token }],
    contexts: [{ name: 'secret-reader', cluster: admin.getCurrentCluster()!.name, user: 'secret-reader' }],
    currentContext: 'secret-reader',
  });
  return config;
}

describe('secretMetadataInformer', () => {
  it('lists and watches the named Secrets without their data or the last-applied copy of it, and no other Secret', async () => {
    expect((await applySecret('listed', CANARY)).code).toBe(0);
    expect((await applySecret('not-configured', CANARY)).code).toBe(0);
    // The Secret as the admin sees it carries the data and kubectl's annotation: the view below must not.
    const full = await kubectl(['get', 'secret', 'listed', '-n', ns, '-o', 'json']);
    expect(leaks(JSON.parse(full.stdout))).not.toEqual([]);

    const config = await restrictedConfig(['listed', 'watched']);
    // The Role names two Secrets: listing the namespace's Secrets, or reading one by name, is refused.
    const core = config.makeApiClient(CoreV1Api);
    await expect(core.listNamespacedSecret({ namespace: ns })).rejects.toMatchObject({ code: 403 });
    await expect(core.readNamespacedSecret({ namespace: ns, name: 'listed' })).rejects.toMatchObject({ code: 403 });

    const informer = secretMetadataInformer(config, ns, ['listed', 'watched']);
    try {
      await informer.start();
      expect(informer.list().map((s) => s.metadata?.name)).toEqual(['listed']);
      const listed = informer.list()[0]!;
      expect(listed.metadata?.uid).toBeTruthy();
      expect(listed).not.toHaveProperty('data');
      expect(leaks(informer.list())).toEqual([]);

      const added = next(informer, 'add', 'watched');
      expect((await applySecret('watched', LATER_CANARY)).code).toBe(0);
      expect((await added).metadata?.name).toBe('watched');
      const updated = next(informer, 'update', 'listed');
      expect((await applySecret('not-configured', LATER_CANARY)).code).toBe(0);
      expect((await applySecret('listed', LATER_CANARY)).code).toBe(0);
      await updated;
      expect(informer.list().map((s) => s.metadata?.name).sort()).toEqual(['listed', 'watched']);
      expect(leaks(informer.list())).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('watches nothing when no Secret is configured, whatever the namespace holds', async () => {
    expect((await kubectl(['get', 'secrets', '-n', ns, '-o', 'name'])).stdout).toContain('secret/not-configured');
    const informer = secretMetadataInformer(clusterConfig(), ns, []);
    await informer.start();
    expect(informer.list()).toEqual([]);
    await informer.stop();
  });
});
