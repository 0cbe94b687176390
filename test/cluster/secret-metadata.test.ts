// The dispatcher's view of Secrets on the real apiserver: names arrive (list and watch), data never does, not even
// the copy `kubectl apply` keeps in the last-applied annotation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { secretMetadataInformer } from '../../dispatcher/kube/metadata-only.ts';
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
const next = (informer: ReturnType<typeof secretMetadataInformer>, event: 'add' | 'update', name: string) =>
  new Promise<KubernetesObject>((resolve) => informer.on(event, (object) => object.metadata?.name === name && resolve(object)));

const leaks = (value: unknown) => {
  const text = JSON.stringify(value);
  return [CANARY, LATER_CANARY].flatMap((canary) => [canary, Buffer.from(canary).toString('base64')]).filter((needle) => text.includes(needle));
};

describe('secretMetadataInformer', () => {
  it('lists and watches Secret names without their data or the last-applied copy of it', async () => {
    expect((await applySecret('listed', CANARY)).code).toBe(0);
    // The Secret as the admin sees it carries the data and kubectl's annotation: the view below must not.
    const full = await kubectl(['get', 'secret', 'listed', '-n', ns, '-o', 'json']);
    expect(leaks(JSON.parse(full.stdout))).not.toEqual([]);

    const informer = secretMetadataInformer(clusterConfig(), ns);
    try {
      await informer.start();
      const listed = informer.list().find((s) => s.metadata?.name === 'listed');
      expect(listed?.metadata?.uid).toBeTruthy();
      expect(listed).not.toHaveProperty('data');
      expect(leaks(informer.list())).toEqual([]);

      const added = next(informer, 'add', 'watched');
      expect((await applySecret('watched', LATER_CANARY)).code).toBe(0);
      expect((await added).metadata?.name).toBe('watched');
      const updated = next(informer, 'update', 'listed');
      expect((await applySecret('listed', LATER_CANARY)).code).toBe(0);
      await updated;
      expect(informer.list().map((s) => s.metadata?.name).sort()).toEqual(expect.arrayContaining(['listed', 'watched']));
      expect(leaks(informer.list())).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
