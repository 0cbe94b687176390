// A zod schema compiled into a plain type guard for the translation hot path. zod stays the one source of truth
// (the guard is built from the schema's own definition, never written by hand), but a zod parse copies every
// object it accepts and allocates a result per field: on a 100 MB transcript that doubled the garbage collector's
// work and cost a third of the throughput. The guard only answers "would zod accept this value?" and allocates
// nothing, so an accepted value is used as it came (with the extra keys z.object would have stripped, which
// nothing reads). Only checking schemas are supported: anything that changes a value (transforms, defaults,
// coercion, pipes) or that the guard cannot decide exactly (refinements, other string formats) throws when the
// schema is compiled, never at run time. compiled-schema.test.ts checks that guard and zod agree.
import { z } from 'zod';

export type Guard<T = unknown> = (value: unknown) => value is T;
type Check = (value: unknown) => boolean;
// zod's internal definition objects, read the way zod itself reads them.
type Def = Record<string, unknown> & { type: string };
type Internals = { def: Def; optin?: string; optout?: string };
const internals = (schema: unknown): Internals => (schema as { _zod: Internals })._zod;

const isObject = (value: unknown): value is Record<PropertyKey, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const STRING_FORMATS = new Set(['datetime', 'date', 'time', 'uuid', 'regex']);

/** Compiles `schema` into a guard that accepts exactly what `schema.safeParse` accepts. */
export function compileSchema<S extends z.ZodType>(schema: S): Guard<z.output<S>> {
  return compile(schema, new Map()) as Guard<z.output<S>>;
}

function unsupported(what: string): never {
  throw new Error(`compileSchema: ${what} is not supported (the guard must agree exactly with zod)`);
}

function compile(schema: unknown, seen: Map<unknown, Check>): Check {
  const known = seen.get(schema);
  if (known) return known;
  // A recursive schema (z.json()) reaches itself through z.lazy: calls made while it is built go through `slot`.
  const slot: { check?: Check } = {};
  seen.set(schema, (value) => slot.check!(value));
  slot.check = build(internals(schema).def, seen);
  seen.set(schema, slot.check);
  return slot.check;
}

/** The length check of a schema without length bounds: callers that see it skip the call. */
const anyLength: Check = () => true;

function lengthChecks(def: Def): Check {
  const bounds = ((def.checks as unknown[] | undefined) ?? []).map((c) => internals(c).def as Def & { check: string; minimum?: number; maximum?: number; length?: number });
  let min = 0;
  let max = Infinity;
  for (const b of bounds) {
    if (b.check === 'min_length') min = Math.max(min, b.minimum!);
    else if (b.check === 'max_length') max = Math.min(max, b.maximum!);
    else if (b.check === 'length_equals') [min, max] = [Math.max(min, b.length!), Math.min(max, b.length!)];
    else unsupported(`the check ${b.check} on a ${def.type}`);
  }
  if (min === 0 && max === Infinity) return anyLength;
  return (value) => (value as { length: number }).length >= min && (value as { length: number }).length <= max;
}

function numberCheck(def: Def): Check {
  if (def.coerce) unsupported('coercion');
  const bounds = ((def.checks as unknown[] | undefined) ?? []).map((c) => internals(c).def as Def & { check: string; value: number; inclusive: boolean });
  let format: Check;
  if (def.format === undefined) format = (v) => Number.isFinite(v);
  else if (def.format === 'safeint') format = (v) => Number.isSafeInteger(v);
  else unsupported(`the number format ${String(def.format)}`);
  const tests: Check[] = bounds.map((b) => {
    if (b.check === 'greater_than') return b.inclusive ? (v) => (v as number) >= b.value : (v) => (v as number) > b.value;
    if (b.check === 'less_than') return b.inclusive ? (v) => (v as number) <= b.value : (v) => (v as number) < b.value;
    return unsupported(`the check ${b.check} on a number`);
  });
  return (value) => {
    if (typeof value !== 'number' || !format(value)) return false;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return false;
    return true;
  };
}

function stringCheck(def: Def): Check {
  if (def.coerce) unsupported('coercion');
  const length = lengthChecks(def);
  if (def.format === undefined) return length === anyLength ? (value) => typeof value === 'string' : (value) => typeof value === 'string' && length(value);
  if (!STRING_FORMATS.has(def.format as string) || !(def.pattern instanceof RegExp)) unsupported(`the string format ${String(def.format)}`);
  const pattern = def.pattern;
  return (value) => {
    if (typeof value !== 'string' || !length(value)) return false;
    pattern.lastIndex = 0;
    return pattern.test(value);
  };
}

/**
 * The leaf checks an object's generated code can hold inline, as an expression over `v` (no call per field); the
 * same verdicts as their closures in build(). Undefined for anything else, which is called as a closure.
 */
function inlineExpression(schema: unknown): string | undefined {
  const def = internals(schema).def;
  const checks = (def.checks as unknown[] | undefined) ?? [];
  switch (def.type) {
    case 'string': {
      if (def.coerce || def.format !== undefined) return undefined;
      const bounds = checks.map((c) => internals(c).def as Def & { check: string; minimum?: number });
      if (bounds.length === 0) return `typeof v === 'string'`;
      if (bounds.length === 1 && bounds[0]!.check === 'min_length') return `(typeof v === 'string' && v.length >= ${Number(bounds[0]!.minimum)})`;
      return undefined;
    }
    case 'number': {
      if (def.coerce || (def.format !== undefined && def.format !== 'safeint')) return undefined;
      const bounds = checks.map((c) => internals(c).def as Def & { check: string; value: number; inclusive: boolean });
      if (!bounds.every((b) => b.check === 'greater_than' && b.inclusive && Number.isFinite(b.value))) return undefined;
      const kind = def.format === 'safeint' ? 'Number.isSafeInteger(v)' : `(typeof v === 'number' && Number.isFinite(v))`;
      return [kind, ...bounds.map((b) => `v >= ${Number(b.value)}`)].join(' && ');
    }
    case 'boolean':
      return `typeof v === 'boolean'`;
    case 'null':
      return 'v === null';
    case 'unknown':
    case 'any':
      return 'true';
    case 'literal': {
      const values = def.values as unknown[];
      return values.length === 1 && typeof values[0] === 'string' ? `v === ${JSON.stringify(values[0])}` : undefined;
    }
    case 'optional':
    case 'nullable': {
      if (checks.length > 0) return undefined;
      const inner = inlineExpression(def.innerType);
      return inner === undefined ? undefined : `(v === ${def.type === 'optional' ? 'undefined' : 'null'} || ${inner})`;
    }
    case 'array': {
      // An array of anything without length bounds (a record's content blocks): no walk, as in build().
      const elementType = internals(def.element).def.type;
      return checks.length === 0 && (elementType === 'unknown' || elementType === 'any') ? 'Array.isArray(v)' : undefined;
    }
    case 'union': {
      // A plain (inclusive) union of leaf checks, tried in order like its closure (e.g. a string or an array).
      if (def.discriminator !== undefined || def.inclusive === false || checks.length > 0) return undefined;
      const options = (def.options as unknown[]).map(inlineExpression);
      return options.length > 0 && options.every((o) => o !== undefined) ? `(${options.join(' || ')})` : undefined;
    }
    default:
      return undefined;
  }
}

/** z.object: zod's own reading of each key (optional-in/out keys may be absent, others must be present). */
function objectCheck(def: Def, seen: Map<unknown, Check>): Check {
  const shape = def.shape as Record<string, unknown>;
  const catchall = def.catchall === undefined ? undefined : internals(def.catchall).def.type;
  if (catchall !== undefined && catchall !== 'never') unsupported(`an object catchall of ${catchall}`);
  const keys = Object.keys(shape).filter((key) => key !== '__proto__');
  const fields = keys.map((key) => {
    const { optin, optout } = internals(shape[key]);
    return { key, check: compile(shape[key], seen), absentOk: optin !== undefined && optout === 'optional', mustBePresent: optin === undefined };
  });
  const declared = new Set(Object.keys(shape));
  // Generated with each key as a literal (as zod's own JIT does): V8 then reads every field through an inline
  // cache instead of a dictionary lookup by a variable key, which made this loop the guard's main cost.
  const lines = fields.map(({ key, absentOk, mustBePresent }, i) => {
    const k = JSON.stringify(key);
    const ok = inlineExpression(shape[key]) ?? `checks[${i}](v)`;
    if (absentOk) return `{ const v = value[${k}]; if ((v !== undefined || ${k} in value) && !(${ok})) return false; }`;
    if (mustBePresent) return `{ const v = value[${k}]; if (!(${ok}) || (v === undefined && !(${k} in value))) return false; }`;
    return `{ const v = value[${k}]; if (!(${ok})) return false; }`;
  });
  if (catchall === 'never') lines.push('for (const key in value) if (!declared.has(key)) return false;');
  const body = `return (value) => {\n  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;\n  ${lines.join('\n  ')}\n  return true;\n};`;
  return new Function('checks', 'declared', body)(fields.map((field) => field.check), declared) as Check;
}

function recordCheck(def: Def, seen: Map<unknown, Check>): Check {
  const keyDef = internals(def.keyType).def;
  if (keyDef.type !== 'string' || keyDef.format !== undefined || ((keyDef.checks as unknown[] | undefined) ?? []).length > 0) unsupported('a record key other than z.string()');
  const valueCheck = compile(def.valueType, seen);
  const isPlainObject = z.core.util.isPlainObject;
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of Reflect.ownKeys(value)) {
      if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(value, key)) continue;
      if (typeof key !== 'string' || !valueCheck((value as Record<string, unknown>)[key])) return false;
    }
    return true;
  };
}

function discriminatedUnionCheck(def: Def, seen: Map<unknown, Check>): Check {
  if (def.unionFallback) unsupported('a discriminated union with unionFallback');
  const discriminator = def.discriminator as string;
  const byTag = new Map<unknown, Check>();
  for (const option of def.options as unknown[]) {
    const tag = internals(option).def.shape as Record<string, unknown> | undefined;
    const tagDef = tag?.[discriminator] === undefined ? undefined : internals(tag[discriminator]).def;
    if (tagDef?.type !== 'literal') unsupported('a discriminated union option without a literal tag');
    for (const literal of tagDef.values as unknown[]) byTag.set(literal, compile(option, seen));
  }
  if (![...byTag.keys()].every((tag) => typeof tag === 'string')) {
    return (value) => {
      if (!isObject(value)) return false;
      const option = byTag.get(value[discriminator]);
      return option !== undefined && option(value);
    };
  }
  // String tags: a generated switch reading the tag by its literal name (an inline cache, as for objects).
  const options = [...byTag.values()];
  const cases = [...byTag.keys()].map((tag, i) => `case ${JSON.stringify(tag)}: return options[${i}](value);`);
  const body = `return (value) => {\n  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;\n  switch (value[${JSON.stringify(discriminator)}]) {\n    ${cases.join('\n    ')}\n    default: return false;\n  }\n};`;
  return new Function('options', body)(options) as Check;
}

const TYPES_WITH_CHECKS = new Set(['string', 'number', 'array']);

function build(def: Def, seen: Map<unknown, Check>): Check {
  // Anything else with checks carries a refinement: code the guard cannot read.
  if (!TYPES_WITH_CHECKS.has(def.type) && ((def.checks as unknown[] | undefined) ?? []).length > 0) unsupported(`checks on a ${def.type}`);
  switch (def.type) {
    case 'string':
      return stringCheck(def);
    case 'number':
      return numberCheck(def);
    case 'boolean':
      return (value) => typeof value === 'boolean';
    case 'null':
      return (value) => value === null;
    case 'unknown':
    case 'any':
      return () => true;
    case 'literal': {
      const values = new Set(def.values as unknown[]);
      return (value) => values.has(value);
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries as Record<string, unknown>));
      return (value) => values.has(value);
    }
    case 'optional': {
      const inner = compile(def.innerType, seen);
      return (value) => value === undefined || inner(value);
    }
    case 'nullable': {
      const inner = compile(def.innerType, seen);
      return (value) => value === null || inner(value);
    }
    case 'array': {
      const element = compile(def.element, seen);
      const length = lengthChecks(def);
      const elementType = internals(def.element).def.type;
      // An array of anything (a record's content blocks, read one by one later) needs no walk.
      if (elementType === 'unknown' || elementType === 'any') return length === anyLength ? (value) => Array.isArray(value) : (value) => Array.isArray(value) && length(value);
      // Indexed, not every(): zod reads holes of a sparse array as undefined.
      return (value) => {
        if (!Array.isArray(value) || !length(value)) return false;
        for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
        return true;
      };
    }
    case 'object':
      return objectCheck(def, seen);
    case 'record':
      return recordCheck(def, seen);
    case 'union': {
      if (def.discriminator !== undefined) return discriminatedUnionCheck(def, seen);
      if (def.inclusive === false) unsupported('an exclusive union');
      const options = (def.options as unknown[]).map((option) => compile(option, seen));
      return (value) => {
        for (let i = 0; i < options.length; i++) if (options[i]!(value)) return true;
        return false;
      };
    }
    case 'lazy': {
      let inner: Check | undefined;
      return (value) => (inner ??= compile((def.getter as () => unknown)(), seen))(value);
    }
    case 'custom': {
      const fn = def.fn as (value: unknown) => unknown;
      return (value) => Boolean(fn(value));
    }
    default:
      return unsupported(`a schema of type ${def.type}`);
  }
}
