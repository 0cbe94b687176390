// kubeconform needs JSON schemas per kind; with no internet they are made here from the test apiserver's own
// OpenAPI document (the pinned Kubernetes version, plus every installed CRD), the way openapi2jsonschema does:
// $refs inlined (a recursive one cut to an open schema), int-or-string and Quantity accept numbers and strings,
// and objects closed (additionalProperties: false) for -strict. Layout: <dir>/<group, or the version for core>/<version>/<kind>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Schema = Record<string, unknown>;

// kubeconform's .Group is the apiVersion's first part: `apps` for apps/v1, `v1` for the core group.
export const SCHEMA_LOCATION_TEMPLATE = (dir: string) => `${dir}/{{ .Group }}/{{ .ResourceAPIVersion }}/{{ .ResourceKind }}.json`;

function resolve(node: unknown, definitions: Record<string, Schema>, path: string[]): unknown {
  if (Array.isArray(node)) return node.map((n) => resolve(n, definitions, path));
  if (typeof node !== 'object' || node === null) return node;
  const schema = node as Schema;
  const ref = schema.$ref as string | undefined;
  if (ref) {
    const name = ref.replace('#/definitions/', '');
    if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity' || name === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString') return { oneOf: [{ type: 'string' }, { type: 'number' }] };
    if (path.includes(name)) return {}; // recursive (JSONSchemaProps): left open
    return resolve(definitions[name] ?? {}, definitions, [...path, name]);
  }
  if (schema.format === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-kubernetes-')) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Schema).map(([k, v]) => [k, resolve(v, definitions, path)])) : resolve(value, definitions, path);
  }
  // Strict: unknown fields are errors, as the apiserver's strict field validation makes them.
  if (out.properties && out.additionalProperties === undefined && !schema['x-kubernetes-preserve-unknown-fields']) out.additionalProperties = false;
  return out;
}

/** Writes one standalone schema per group/version/kind found in the OpenAPI v2 document. */
export function writeKubeconformSchemas(openapi: { definitions: Record<string, Schema> }, dir: string): number {
  let written = 0;
  for (const [name, definition] of Object.entries(openapi.definitions)) {
    const gvks = definition['x-kubernetes-group-version-kind'] as { group: string; version: string; kind: string }[] | undefined;
    if (!gvks) continue;
    const schema = resolve(definition, openapi.definitions, [name]) as Schema;
    for (const gvk of gvks) {
      const target = join(dir, gvk.group || gvk.version, gvk.version);
      mkdirSync(target, { recursive: true });
      writeFileSync(join(target, `${gvk.kind.toLowerCase()}.json`), JSON.stringify(schema));
      written++;
    }
  }
  return written;
}
