// The chart rendered by the pinned helm (the cluster project's binaries), for the tests that read what it makes:
// release `t` in namespace `ns`. One copy for chart-nats-auth, chart-network and egress-proxy.
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { expect, inject } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import { runCaptured } from '../cluster/support.ts';

export const CHART = join(import.meta.dirname, '..', '..', 'charts', 'tcab');
export type Manifest = { kind: string; metadata: { name: string } } & Record<string, unknown>;

const helm = (args: string[]) => runCaptured(join(inject('clusterBinDir'), 'helm'), args);

/** `helm template t CHART -n ns <set...>`, which must succeed: its manifests. */
export async function render(...set: string[]): Promise<Manifest[]> {
  const out = await helm(['template', 't', CHART, '-n', 'ns', ...set]);
  expect(out.code, out.stderr).toBe(0);
  return parseAllDocuments(out.stdout).map((d) => d.toJS() as Manifest).filter(Boolean);
}

/** The same, which must fail: helm's message. */
export async function refused(...set: string[]): Promise<string> {
  const out = await helm(['template', 't', CHART, ...set]);
  expect(out.code).not.toBe(0);
  return out.stderr;
}

/** What `helm install` prints after NOTES: (a client-side dry run). */
export async function notes(...set: string[]): Promise<string> {
  const out = await helm(['install', 't', CHART, '-n', 'ns', '--dry-run=client', ...set]);
  expect(out.code, out.stderr).toBe(0);
  return out.stdout.slice(out.stdout.indexOf('NOTES:'));
}

export const one = <T>(all: Manifest[], kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name) as T | undefined;
export const dispatcherEnv = (all: Manifest[]) => Object.fromEntries(one<V1Deployment>(all, 'Deployment', 't-tcab-dispatcher')!.spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
