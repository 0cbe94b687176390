// `kubectl explain run.spec` documents the whole resource: every property of the CRDs that ship (deploy/crds for
// `kubectl apply`, the chart's crds/ for `helm install`) carries a description, which comes from the zod
// `.describe()` in shared/ (or crds.ts for apiVersion and kind). A field added without one fails here.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

type Schema = { description?: unknown; properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean };

/** Paths of the properties under `schema` (through array items and maps) without a non-empty description. */
export function undescribed(schema: Schema, path = ''): string[] {
  const out: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const at = `${path}.${name}`;
    if (typeof property.description !== 'string' || property.description.trim() === '') out.push(at);
    out.push(...undescribed(property, at));
  }
  if (schema.items) out.push(...undescribed(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') out.push(...undescribed(schema.additionalProperties, `${path}{}`));
  return out;
}

const shipped = ['deploy/crds', 'charts/tcab/crds'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `${dir}/${f}`),
);

describe('CRD descriptions', () => {
  it('the walk finds an undescribed property at any depth', () => {
    const schema: Schema = {
      properties: {
        spec: {
          description: 'd',
          properties: { files: { description: 'd', items: { properties: { mode: {}, path: { description: ' ' } } } }, env: { description: 'd', additionalProperties: { properties: { v: {} } } } },
        },
        status: {},
      },
    };
    expect(undescribed(schema)).toEqual(['.spec.files[].mode', '.spec.files[].path', '.spec.env{}.v', '.status']);
  });

  it('both CRDs ship in both places', () => {
    expect(shipped.sort()).toEqual([
      'charts/tcab/crds/evaluations.tcab.dev.yaml', 'charts/tcab/crds/harnessconfigs.tcab.dev.yaml', 'charts/tcab/crds/runs.tcab.dev.yaml',
      'deploy/crds/evaluations.tcab.dev.yaml', 'deploy/crds/harnessconfigs.tcab.dev.yaml', 'deploy/crds/runs.tcab.dev.yaml',
    ]);
  });

  it.each(shipped)('%s: every property has a description', (file) => {
    const crd = parse(readFileSync(join(ROOT, file), 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };
    for (const version of crd.spec.versions) {
      const root = version.schema.openAPIV3Schema;
      expect(root.description, version.name).toEqual(expect.stringMatching(/\S/));
      // The apiserver refuses a description on metadata (ObjectMeta documents itself in `kubectl explain`).
      expect(undescribed(root), version.name).toEqual(['.metadata']);
    }
  });
});
