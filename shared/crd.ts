// Turns a zod schema's JSON Schema into a Kubernetes structural schema (apiextensions.k8s.io/v1), so the CRDs
// are generated from the same zod source as everything else. Rules applied (see the Kubernetes docs on
// "Specifying a structural schema"): every node has a type; unions of objects become one object with all
// properties plus `oneOf` of `required` sets; `T | null` becomes `nullable: true`; `const` becomes `enum`;
// `additionalProperties: false` is dropped (the apiserver prunes and, with strict field validation, rejects
// unknown fields); an untyped node (any JSON value) preserves unknown fields.
import { z } from 'zod';

type Schema = Record<string, unknown>;

const DROP = new Set(['$schema', '$id', 'title', 'additionalProperties', 'format', 'pattern']);
const KEEP_PATTERN_MAX = 200;

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function toStructural(node: Schema): Schema {
  const variants = (node.anyOf ?? node.oneOf) as Schema[] | undefined;
  if (variants) {
    const nonNull = variants.filter((v) => v.type !== 'null');
    const nullable = nonNull.length !== variants.length;
    if (nonNull.length === 1) return { ...toStructural({ ...nonNull[0], ...(node.description ? { description: node.description } : {}) }), ...(nullable ? { nullable: true } : {}) };
    if (nonNull.every((v) => v.type === 'object')) {
      const properties: Record<string, Schema> = {};
      for (const v of nonNull) Object.assign(properties, v.properties as Record<string, Schema>);
      return {
        type: 'object',
        ...(node.description ? { description: node.description } : {}),
        properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, toStructural(v)])),
        oneOf: nonNull.map((v) => ({ required: (v.required as string[] | undefined) ?? [] })),
        ...(nullable ? { nullable: true } : {}),
      };
    }
    return { 'x-kubernetes-preserve-unknown-fields': true, ...(node.description ? { description: node.description } : {}) };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROP.has(key)) continue;
    if (key === 'const') out.enum = [value];
    else if (key === 'properties' && isObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toStructural(v as Schema)]));
    else if (key === 'items' && isObject(value)) out.items = toStructural(value);
    else if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) >= Number.MAX_SAFE_INTEGER) continue;
    else out[key] = value;
  }
  // Short, RE2-compatible patterns (slugs) stay: they give `kubectl apply` field-level errors.
  if (typeof node.pattern === 'string' && node.pattern.length <= KEEP_PATTERN_MAX && !node.pattern.includes('(?')) out.pattern = node.pattern;
  if (node.type === 'object' && isObject(node.additionalProperties) && !node.properties) {
    out.additionalProperties = toStructural(node.additionalProperties);
  }
  if (out.type === undefined && out.enum === undefined && !out.properties) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (out.type === undefined && Array.isArray(out.enum)) out.type = typeof out.enum[0] === 'number' ? 'number' : 'string';
  return out;
}

export function structuralSchema(schema: z.ZodType): Schema {
  return toStructural(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Schema);
}
