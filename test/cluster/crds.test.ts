// Our generated CRDs (deploy/crds/, from the zod schemas) on a real apiserver: they install, a valid Run is
// stored, and `kubectl apply` of a bad Run is refused with the field named.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, kubectl } from './support.ts';

const CRDS = join(import.meta.dirname, '..', '..', 'deploy', 'crds');
let ns: string;
let removeNs: () => Promise<void>;
beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('crds'));
  const applied = await kubectl(['apply', '-f', CRDS]);
  expect(applied.stderr).toBe('');
  expect((await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', '--timeout=30s'])).code).toBe(0);
});
afterAll(async () => removeNs());

const run = (name: string, spec: object) => JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec });

describe('Run and HarnessConfig CRDs', () => {
  it('stores a valid Run, with the printer columns and short name', async () => {
    expect((await kubectl(['apply', '-f', '-'], run('ok', { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'say hi' }))).code).toBe(0);
    const table = await kubectl(['get', 'trun', '-n', ns, 'ok']);
    expect(table.stdout.split('\n')[0]).toMatch(/NAME\s+HARNESS\s+MODEL\s+PHASE/);
    expect(table.stdout).toContain('claude-sonnet-4-5');
  });

  it.each([
    ['a harness that is not a slug', { harness: 'Claude Code', model: 'm', prompt: 'p' }, 'spec.harness'],
    ['an empty prompt', { harness: 'claude', model: 'm', prompt: '' }, 'spec.prompt'],
    ['a missing model', { harness: 'claude', prompt: 'p' }, 'spec.model'],
    ['a negative runtime', { harness: 'claude', model: 'm', prompt: 'p', maxRuntimeSeconds: -1 }, 'spec.maxRuntimeSeconds'],
  ])('refuses %s, naming the field', async (_what, spec, field) => {
    const result = await kubectl(['apply', '-f', '-'], run('bad', spec));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(field);
  });

  it('`kubectl explain` documents the resources from the schemas\' descriptions (the apiserver serves them)', async () => {
    const { RunSpec } = await import('../../shared/run.ts');
    const prompt = await kubectl(['explain', 'runs.spec.prompt', '--api-version=tcab.dev/v1alpha1']);
    expect(prompt.code, prompt.stderr).toBe(0);
    // kubectl wraps descriptions to its width: compare with whitespace collapsed.
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    expect(flat(prompt.stdout)).toContain(RunSpec.shape.prompt.description!);
    const spec = await kubectl(['explain', 'runs.spec', '--api-version=tcab.dev/v1alpha1']);
    expect(flat(spec.stdout)).toContain(RunSpec.description!);
    const cap = await kubectl(['explain', 'harnessconfigs.spec.maxParallelism', '--api-version=tcab.dev/v1alpha1']);
    expect(cap.code, cap.stderr).toBe(0);
    expect(cap.stdout).toMatch(/DESCRIPTION:\s+\S/);
  });

  it('refuses a HarnessConfig with a negative maxParallelism', async () => {
    const config = JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'HarnessConfig', metadata: { name: 'codex' }, spec: { maxParallelism: -2 } });
    const result = await kubectl(['apply', '-f', '-'], config);
    expect(result.stderr).toContain('spec.maxParallelism');
  });
});
