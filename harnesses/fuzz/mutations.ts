// Mutations of a recorded harness stream for the translator property suite: hostile versions of real records
// (wrong-typed and missing fields, huge and deeply nested values, invalid UTF-8) and of their order (duplicated,
// moved, dropped records). A mutation is plain data (indices taken modulo what the stream has), so fast-check
// shrinks a failing plan to a small one and the counterexample names exactly what was done.
import fc from 'fast-check';
import { nestedDeeperThan } from '../../shared/json-depth.ts';

type Path = (string | number)[];
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Mutation =
  | { kind: 'wrong-type'; line: number; node: number; value: number }
  | { kind: 'remove'; line: number; node: number }
  | { kind: 'huge'; line: number; node: number; size: number }
  | { kind: 'deep'; line: number; node: number; depth: number; shape: number }
  | { kind: 'bad-utf8'; line: number; offset: number; bytes: number }
  | { kind: 'duplicate'; line: number; to: number }
  | { kind: 'move'; line: number; to: number }
  | { kind: 'drop'; line: number };

/** Values put where another type was recorded: each is wrong for some leaf (strings for booleans, etc.). */
const WRONG_VALUES: JsonValue[] = ['true', '', 'x', 42, -1, 1.5, 0, null, true, false, {}, [], ['x'], { x: 1 }];
const HUGE_SIZES = [1 << 16, 1 << 20];
/** 100,000 is finding 3's line; the engine hands lines deeper than its limit to adapters as text. */
const DEPTHS = [5, 50, 200, 100_000];
const BAD_UTF8: number[][] = [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80]];
const MAX_NODES = 4000;
const DEEP_PLACEHOLDER = '__tcab_fuzz_deep_value__';
/**
 * Records nested deeper than this are left as they are by later record mutations, like text lines: mutating one
 * means JSON.stringify, which recurses (it overflows near 4,400 levels, less on a deep test stack). A plan may
 * stack several deep values into one record, so the bound is on the record, not on each splice.
 */
const MAX_MUTABLE_DEPTH = 1000;

/** JSON kinds, with integers apart from fractions: 1.5 is as wrong for a count as a string is. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'fraction';
  return typeof value;
}

/** Every node below the root (objects' keys and arrays' elements), depth first, at most MAX_NODES. */
export function nodePaths(root: unknown): Path[] {
  const out: Path[] = [];
  const stack: { value: unknown; path: Path }[] = [{ value: root, path: [] }];
  while (stack.length > 0 && out.length < MAX_NODES) {
    const { value, path } = stack.pop()!;
    if (path.length > 0) out.push(path);
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (value as Record<string, unknown>)[keys[i]!], path: [...path, keys[i]!] });
    }
  }
  return out;
}

function getAt(root: unknown, path: Path): unknown {
  let value = root;
  for (const key of path) value = (value as Record<string | number, unknown>)[key];
  return value;
}

function setAt(root: JsonValue, path: Path, value: JsonValue | undefined): void {
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, JsonValue> | JsonValue[];
  const key = path[path.length - 1]!;
  if (value !== undefined) (parent as Record<string | number, JsonValue>)[key] = value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
}

/** A line's JSON record when later mutations can rewrite it: an object or array at most MAX_MUTABLE_DEPTH deep. */
function parseRecord(line: Buffer): JsonValue | undefined {
  try {
    const value = JSON.parse(line.toString('utf8')) as JsonValue;
    return typeof value === 'object' && value !== null && !nestedDeeperThan(value, MAX_MUTABLE_DEPTH) ? value : undefined;
  } catch {
    return undefined;
  }
}

function deepText(depth: number, shape: number): string {
  return shape % 2 === 0 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Applies a leaf/node mutation to one JSON record; undefined when the record has no node to mutate. */
function mutateRecord(record: JsonValue, m: Extract<Mutation, { node: number }>): Buffer | undefined {
  const paths = nodePaths(record);
  if (m.kind === 'huge') {
    // Prefer a string leaf: a huge value of the recorded type (a wrong type is wrong-type's job).
    const strings = paths.filter((p) => typeof getAt(record, p) === 'string');
    const pool = strings.length > 0 ? strings : paths;
    if (pool.length === 0) return undefined;
    const size = HUGE_SIZES[m.size % HUGE_SIZES.length]!;
    setAt(record, pool[m.node % pool.length]!, 'ü'.repeat(size / 2) + 'x'.repeat(size / 2));
    return Buffer.from(JSON.stringify(record));
  }
  // A recorded null says nothing of its field's type (a nullable id takes a string), so it is no wrong-type target.
  const pool = m.kind === 'wrong-type' ? paths.filter((p) => getAt(record, p) !== null) : paths;
  if (pool.length === 0) return undefined;
  const path = pool[m.node % pool.length]!;
  if (m.kind === 'remove') {
    setAt(record, path, undefined);
    return Buffer.from(JSON.stringify(record));
  }
  if (m.kind === 'wrong-type') {
    const value = getAt(record, path);
    const recorded = kindOf(value);
    // An integer is a fine value where a fraction was recorded (a cost of 42); a fraction is not where a count was.
    // A recorded 0 says neither: nothing spent is a cost of 0 as nothing read is a count of 0, so a fraction there
    // is no wrong type (claude's error-400 total_cost_usd of 0 made 1.5 look invented: fuzz seeds 5, 11, 77).
    const candidates = WRONG_VALUES.filter(
      (v) => kindOf(v) !== recorded && !(recorded === 'fraction' && kindOf(v) === 'integer') && !(value === 0 && kindOf(v) === 'fraction'),
    );
    setAt(record, path, structuredClone(candidates[m.value % candidates.length]!));
    return Buffer.from(JSON.stringify(record));
  }
  // deep: spliced in as text, so building the line never recurses through the nesting.
  setAt(record, path, DEEP_PLACEHOLDER);
  const text = JSON.stringify(record).replace(`"${DEEP_PLACEHOLDER}"`, () => deepText(DEPTHS[m.depth % DEPTHS.length]!, m.shape));
  return Buffer.from(text);
}

/** The stream after the plan: lines as bytes (a line may hold invalid UTF-8), without their newlines. */
export function applyPlan(original: readonly Buffer[], plan: readonly Mutation[]): Buffer[] {
  const lines = [...original];
  for (const m of plan) {
    if (lines.length === 0) break;
    const at = m.line % lines.length;
    switch (m.kind) {
      case 'duplicate':
        lines.splice(m.to % (lines.length + 1), 0, lines[at]!);
        break;
      case 'move': {
        const [line] = lines.splice(at, 1);
        lines.splice(m.to % (lines.length + 1), 0, line!);
        break;
      }
      case 'drop':
        lines.splice(at, 1);
        break;
      case 'bad-utf8': {
        const line = lines[at]!;
        const offset = m.offset % (line.length + 1);
        lines[at] = Buffer.concat([line.subarray(0, offset), Buffer.from(BAD_UTF8[m.bytes % BAD_UTF8.length]!), line.subarray(offset)]);
        break;
      }
      default: {
        // Record mutations pick among the JSON lines, so a plan does not shrink to a no-op on a text line.
        const json = lines.map((l, i) => [i, parseRecord(l)] as const).filter(([, r]) => r !== undefined);
        if (json.length === 0) break;
        const [index, record] = json[m.line % json.length]!;
        const mutated = mutateRecord(record!, m);
        if (mutated) lines[index] = mutated;
      }
    }
  }
  return lines;
}


const index = fc.nat({ max: 1_000_000 });

export const wrongTypeArb: fc.Arbitrary<Extract<Mutation, { kind: 'wrong-type' }>> = fc.record({
  kind: fc.constant('wrong-type' as const),
  line: index,
  node: index,
  value: index,
});

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: wrongTypeArb, weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), line: index, node: index }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('duplicate' as const), line: index, to: index }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('move' as const), line: index, to: index }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('drop' as const), line: index }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('bad-utf8' as const), line: index, offset: index, bytes: index }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('huge' as const), line: index, node: index, size: index }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('deep' as const), line: index, node: index, depth: index, shape: index }), weight: 1 },
);

export const planArb: fc.Arbitrary<Mutation[]> = fc.array(mutationArb, { minLength: 1, maxLength: 4 });
