// The chart's image, hardening and extra-CA values as rendered by the pinned helm and accepted by the test
// apiserver (server-side dry run, strict field validation): image names default to what `npm run images` builds,
// every workload runs hardened, and extraCA reaches the dispatcher and npm-cache containers as a read-only file
// that NODE_EXTRA_CA_CERTS names (driver Pods: dispatcher/pods/driver-pod.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createNamespace, kubectl, runCaptured } from '../cluster/support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CHART = join(ROOT, 'charts', 'tcab');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
// A real certificate: the first of Debian's bundle.
const PEM = readFileSync('/etc/ssl/certs/ca-certificates.crt', 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/)![0];

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[]; add?: string[] } };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
    template?: { spec: { securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } }; containers: Container[]; volumes?: { name: string; emptyDir?: object; configMap?: { name: string; items?: { key: string; path: string }[] } }[] } };
  };
}

let ns: { name: string; remove: () => Promise<void> };
const helm = (args: string[]) => runCaptured(join(inject('clusterBinDir'), 'helm'), args);
async function render(...set: string[]): Promise<{ text: string; manifests: Manifest[] }> {
  const out = await helm(['template', 'tcab', CHART, '-n', ns.name, '--set', 'npmCache.enabled=true', ...set]);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return { text: out.stdout, manifests: parseAllDocuments(out.stdout).map((d) => d.toJS() as Manifest).filter(Boolean) };
}
const workload = (manifests: Manifest[], name: string) => manifests.find((m) => m.metadata.name === name && (m.kind === 'Deployment' || m.kind === 'StatefulSet'))!.spec!.template!.spec;
const env = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;

beforeAll(async () => {
  ns = await createNamespace('chart-images');
});
afterAll(async () => {
  await ns?.remove();
});

describe('charts/tcab images and extraCA', () => {
  it('defaults every image to the names npm run images builds, each repository and tag overridable', async () => {
    const { manifests } = await render();
    expect(workload(manifests, 'tcab-tcab-dispatcher').containers[0]!.image).toBe(`ghcr.io/tcab/dispatcher:${VERSION}`);
    expect(env(workload(manifests, 'tcab-tcab-dispatcher').containers[0]!, 'TCAB_DRIVER_IMAGE')).toBe(`ghcr.io/tcab/driver:${VERSION}`);
    expect(workload(manifests, 'tcab-tcab-nats').containers[0]!.image).toBe(`ghcr.io/tcab/nats:${VERSION}`);
    expect(workload(manifests, 'tcab-tcab-npm-cache').containers[0]!.image).toBe(`ghcr.io/tcab/npm-cache:${VERSION}`);
    const local = await render('--set', 'nats.bundled.image.repository=127.0.0.1:5000/tcab/nats', '--set', 'nats.bundled.image.tag=dev', '--set', 'npmCache.image.repository=127.0.0.1:5000/tcab/npm-cache');
    expect(workload(local.manifests, 'tcab-tcab-nats').containers[0]!.image).toBe('127.0.0.1:5000/tcab/nats:dev');
    expect(workload(local.manifests, 'tcab-tcab-npm-cache').containers[0]!.image).toBe(`127.0.0.1:5000/tcab/npm-cache:${VERSION}`);
  });

  it('every workload is hardened: non-root uid 1000, RuntimeDefault seccomp, no escalation, all capabilities dropped, a read-only root; the StatefulSets\' claims go with a helm uninstall', async () => {
    const { manifests } = await render();
    for (const name of ['tcab-tcab-dispatcher', 'tcab-tcab-nats', 'tcab-tcab-npm-cache']) {
      const pod = workload(manifests, name);
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.containers[0]!.securityContext, name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
    // Verdaccio's temporary files: an emptyDir, as the root is read-only.
    expect(workload(manifests, 'tcab-tcab-npm-cache').volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
    for (const name of ['tcab-tcab-nats', 'tcab-tcab-npm-cache']) {
      const set = manifests.find((m) => m.kind === 'StatefulSet' && m.metadata.name === name)!;
      expect(set.spec!.persistentVolumeClaimRetentionPolicy, name).toEqual({ whenDeleted: 'Delete', whenScaled: 'Retain' });
    }
  });

  it('without extraCA: no CA ConfigMap, volume or variable anywhere', async () => {
    const { text } = await render();
    expect(text).not.toContain('extra-ca');
    expect(text).not.toContain('NODE_EXTRA_CA_CERTS');
    expect(text).not.toContain('TCAB_DRIVER_EXTRA_CA');
  });

  it('extraCA.certificates: a ConfigMap of the PEM, mounted read-only with NODE_EXTRA_CA_CERTS in the dispatcher and npm cache, named to the dispatcher for drivers; the apiserver accepts it', async () => {
    const { text, manifests } = await render('--set-string', `extraCA.certificates=${PEM}`);
    const configMap = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'tcab-tcab-extra-ca')!;
    expect(configMap.data).toEqual({ 'ca.crt': PEM });
    for (const name of ['tcab-tcab-dispatcher', 'tcab-tcab-npm-cache']) {
      const pod = workload(manifests, name);
      expect(pod.volumes).toContainEqual({ name: 'extra-ca', configMap: { name: 'tcab-tcab-extra-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
      expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: 'extra-ca', mountPath: '/etc/tcab/extra-ca', readOnly: true });
      expect(env(pod.containers[0]!, 'NODE_EXTRA_CA_CERTS')).toBe('/etc/tcab/extra-ca/ca.crt');
    }
    expect(JSON.parse(env(workload(manifests, 'tcab-tcab-dispatcher').containers[0]!, 'TCAB_DRIVER_EXTRA_CA')!)).toEqual({ configMap: 'tcab-tcab-extra-ca', key: 'ca.crt' });
    expect(env(workload(manifests, 'tcab-tcab-nats').containers[0]!, 'NODE_EXTRA_CA_CERTS')).toBeUndefined();
    const dryRun = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-n', ns.name, '-f', '-'], text);
    expect(dryRun.stderr).toBe('');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('configmap/tcab-tcab-extra-ca created (server dry run)');
  });

  it('extraCA.existingConfigMap: mounts that ConfigMap\'s key and makes none', async () => {
    const { manifests } = await render('--set', 'extraCA.existingConfigMap=corp-ca', '--set', 'extraCA.key=bundle.pem');
    // Only the chart's own configs (the bundled NATS's, Verdaccio's, the egress proxy's): no CA ConfigMap.
    expect(manifests.filter((m) => m.kind === 'ConfigMap').map((m) => m.metadata.name).sort()).toEqual(['tcab-tcab-egress-proxy', 'tcab-tcab-nats', 'tcab-tcab-npm-cache']);
    expect(workload(manifests, 'tcab-tcab-npm-cache').volumes).toContainEqual({ name: 'extra-ca', configMap: { name: 'corp-ca', items: [{ key: 'bundle.pem', path: 'ca.crt' }] } });
    expect(JSON.parse(env(workload(manifests, 'tcab-tcab-dispatcher').containers[0]!, 'TCAB_DRIVER_EXTRA_CA')!)).toEqual({ configMap: 'corp-ca', key: 'bundle.pem' });
  });

  it('refuses certificates that are not PEM, and an old string image value, with the path named', async () => {
    const notPem = await helm(['template', 't', CHART, '--set', 'extraCA.certificates=hello']);
    expect(notPem.code).not.toBe(0);
    expect(notPem.stderr).toContain('/extraCA/certificates');
    const oldImage = await helm(['template', 't', CHART, '--set', 'nats.bundled.image=nats:2.15.3-alpine']);
    expect(oldImage.code).not.toBe(0);
    expect(oldImage.stderr).toContain('/nats/bundled/image');
  });
});
