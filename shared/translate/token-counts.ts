// Reads a harness's token counts without guessing (issue 19, finding 7): each count field goes through its zod
// schema; a field that fails it (a string, a float, a negative number, null where a number belongs) makes every
// class computed from it null, and the adapter emits one `warning` naming the field. A count is never 0 by
// default, so an unreadable figure can never understate cost silently.
import { z } from 'zod';
import type { DraftEvent } from '../events.ts';
import { TOKEN_CLASSES, shapeTokens } from '../usage.ts';
import type { TokenClass, TokenUsage, UsageShape } from '../usage.ts';
import { compileSchema } from './compiled-schema.ts';

/** Per schema: its compiled guard and its shape's keys (read once, not per usage object). */
const wholeGuards = new WeakMap<z.ZodType, { guard: (value: unknown) => boolean; keys: readonly string[] }>();
/** The schema's compiled guard; zod itself for a schema the compiler does not take (usage is still read). */
function guardOf(schema: z.ZodType): (value: unknown) => boolean {
  try {
    return compileSchema(schema);
  } catch {
    return (value) => schema.safeParse(value).success;
  }
}

/** One token count as harnesses print it. */
export const TokenCount = z.int().nonnegative();

export interface UsageReading<T> {
  /** The fields that passed their schema (absent optional fields stay absent). */
  fields: Partial<T>;
  /** Dotted names of the fields that failed their schema, in schema order. */
  unreadable: string[];
}

/**
 * Reads a usage object field by field through `schema` (a loose object: extra keys are fine). Parses the whole
 * object once; only when that fails is each field parsed alone, so one bad field costs only the classes built
 * from it.
 */
export function readUsage<Shape extends z.ZodRawShape>(schema: z.ZodObject<Shape>, value: unknown): UsageReading<z.infer<z.ZodObject<Shape>>> {
  type Fields = z.infer<z.ZodObject<Shape>>;
  // The whole object first, through the schema's compiled guard (some harnesses print usage with every turn).
  let whole = wholeGuards.get(schema);
  if (whole === undefined) wholeGuards.set(schema, (whole = { guard: guardOf(schema), keys: Object.keys(schema.shape) }));
  if (whole.guard(value)) {
    const fields: Record<string, unknown> = {};
    const { keys } = whole;
    for (let i = 0; i < keys.length; i++) {
      const field = (value as Record<string, unknown>)[keys[i]!];
      if (field !== undefined) fields[keys[i]!] = field;
    }
    return { fields: fields as Partial<Fields>, unreadable: [] };
  }
  const source = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const fields: Record<string, unknown> = {};
  const unreadable: string[] = [];
  for (const [key, fieldSchema] of Object.entries(schema.shape)) {
    const field = (fieldSchema as z.ZodType).safeParse(source[key]);
    if (field.success) {
      if (field.data !== undefined) fields[key] = field.data;
    } else {
      unreadable.push(key);
    }
  }
  return { fields: fields as Partial<Fields>, unreadable };
}

/** A class value as an adapter computes it: a count, or null when a field it is built from was unreadable. */
export type ClassValues = Partial<Record<TokenClass, number | null>>;

/** `shapeTokens`, except that a class the adapter marked null (unreadable) stays null instead of becoming 0. */
export function shapeReadTokens(shape: UsageShape, values: ClassValues): TokenUsage {
  // Only the shape's classes are read (shapeTokens ignores the rest): no entries array per call. An own
  // enumerable key, as Object.entries would have listed it.
  const known: Partial<Record<TokenClass, number>> = {};
  for (const cls of shape.classes) {
    const value = values[cls];
    if (typeof value === 'number' && Object.prototype.propertyIsEnumerable.call(values, cls)) known[cls] = value;
  }
  const tokens = shapeTokens(shape, known);
  for (const cls of shape.classes) if (values[cls] === null) tokens[cls] = null;
  return tokens;
}

/** a - b - ..., or null when any operand is unknown (null), never below 0. */
export function minus(first: number | null | undefined, ...rest: (number | null | undefined)[]): number | null | undefined {
  if (first === null || rest.some((r) => r === null)) return null;
  if (first === undefined) return undefined;
  return Math.max(0, rest.reduce<number>((acc, r) => acc - (r ?? 0), first));
}

/** Adds two session totals class by class; an unknown (null) class stays unknown for the rest of the session. */
export function addClassValues(a: ClassValues, b: ClassValues): ClassValues {
  const out: ClassValues = {};
  for (const cls of TOKEN_CLASSES) {
    const x = a[cls];
    const y = b[cls];
    if (x === undefined && y === undefined) continue;
    out[cls] = x === null || y === null ? null : (x ?? 0) + (y ?? 0);
  }
  return out;
}

/** The warning for usage fields that failed their schema: which record, which fields, that what they feed is null. */
export function unreadableUsageWarning(harness: string, where: string, fields: readonly string[]): DraftEvent {
  const list = fields.map((f) => `${where}.${f}`).join(', ');
  return {
    type: 'warning',
    message: `${harness} usage: unreadable ${list} (not a count of the documented type): what is computed from it is reported as unknown (null), never 0`,
    code: 'unreadable_usage',
  };
}

/**
 * The warning for a session whose usage is a sum over records and that ended before its final record (killed,
 * timed out, cut short): the counts seen so far are kept in raw usage, but the session's total is unknown (null):
 * the record it was in when it stopped had spent tokens too.
 */
export function incompleteUsageWarning(harness: string, seen: string): DraftEvent {
  return {
    type: 'warning',
    message: `${harness} usage: the session ended before its final record; the token counts of the ${seen} seen are kept in raw usage, the session's total is unknown (null)`,
    code: 'incomplete_usage',
  };
}
