import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HarnessEvent } from '../events.ts';
import { AnyJsonObject } from './json-object.ts';
import { compileSchema } from './compiled-schema.ts';
import { DraftEventSchema, TranslationSession } from './session.ts';
import * as claudeRecords from '../../harnesses/claude/records.ts';
import { loadAdapter } from '../../harnesses/registry.ts';

const CLAUDE_FIXTURES = join(import.meta.dirname, '../../harnesses/claude/fixtures');
const fixtureLines = readdirSync(CLAUDE_FIXTURES)
  .filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(join(CLAUDE_FIXTURES, f), 'utf8').split('\n').filter((text) => text.length > 0));
const records: unknown[] = fixtureLines.map((text) => JSON.parse(text) as unknown);
const events: unknown[] = [];
{
  const session = new TranslationSession(await loadAdapter('claude'), { workdir: '/work' });
  for (const text of fixtureLines) events.push(...session.stdout({ text, bytes: Buffer.byteLength(text), truncated: false }));
  events.push(...session.finish({ code: 1, signal: null }).events);
}
const drafts = events.map((event) => {
  const { timestamp: _t, session_id: _s, ...draft } = event as Record<string, unknown>;
  return draft;
});
const blocks = records.flatMap((r) => {
  const content = (r as { message?: { content?: unknown } }).message?.content;
  return Array.isArray(content) ? (content as unknown[]) : [];
});

/** Values at the edges of every check the schemas use: wrong types, bounds, non-JSON numbers, odd keys. */
const edgeValue = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, true, false, 0, -0, -1, 1.5, 2 ** 53, -(2 ** 53), NaN, Infinity, -Infinity, '', 'x', '2026-12-04T18:00:00Z', '2026-12-04T18:00:00.123+02:00', '2026-12-04 18:00', [], {}, [1, 'a', null], { constructor: 1 }, 'agent', 'unknown', 'system', 'subagent_started', 'started', 'tool_use', 'text', 'tool_result'),
  fc.jsonValue({ maxDepth: 3 }),
  fc.anything({ maxDepth: 2 }),
);

type Path = (string | number)[];
function paths(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (typeof value === 'object' && value !== null && at.length < 6) for (const key of Object.keys(value)) paths((value as Record<string, unknown>)[key], [...at, Array.isArray(value) ? Number(key) : key], out);
  return out;
}
/** A copy of `value` with the node at `path` replaced, removed (`remove`), or given an extra key. */
function mutate(value: unknown, path: Path, how: 'replace' | 'remove' | 'add', replacement: unknown): unknown {
  if (path.length === 0) return how === 'replace' ? replacement : how === 'add' && typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, extra_key: replacement } : value;
  const copy = (Array.isArray(value) ? [...(value as unknown[])] : { ...(value as object) }) as Record<string | number, unknown>;
  const [head, ...rest] = path;
  if (rest.length === 0 && how === 'remove') delete copy[head!];
  else copy[head!] = mutate(copy[head!], rest, how, replacement);
  return copy;
}
const mutated = (seeds: readonly unknown[]) =>
  fc
    .tuple(fc.constantFrom(...seeds), fc.nat(), fc.constantFrom('replace', 'remove', 'add') as fc.Arbitrary<'replace' | 'remove' | 'add'>, edgeValue, fc.nat(3))
    .map(([seed, pick, how, replacement, rounds]) => {
      let value = seed;
      for (let i = 0; i <= rounds; i++) {
        const all = paths(value);
        value = mutate(value, all[(pick + i * 7) % all.length]!, how, replacement);
      }
      return value;
    });

const agree = (schema: z.ZodType, seeds: readonly unknown[]) => {
  const guard = compileSchema(schema);
  for (const seed of seeds) expect([guard(seed), seed]).toEqual([schema.safeParse(seed).success, seed]);
  fc.assert(
    fc.property(fc.oneof(mutated(seeds), edgeValue), (value) => {
      expect(guard(value)).toBe(schema.safeParse(value).success);
    }),
    { seed: 19, numRuns: 400 },
  );
};

describe('compileSchema: a guard built from a zod schema accepts exactly what the schema accepts', () => {
  it('finding 8: the event contract, as guard, agrees with zod on the events of real transcripts and their mutations', () => {
    expect(events.length).toBeGreaterThan(20);
    agree(HarnessEvent, events);
  });

  it('finding 8: the draft contract the engine checks agrees with zod on drafts and their mutations', () => {
    agree(DraftEventSchema, drafts);
  });

  it('finding 7: every claude record schema agrees with zod on recorded records, blocks and their mutations', () => {
    const schemas = Object.values(claudeRecords as Record<string, unknown>).filter((schema): schema is z.ZodType => schema instanceof z.ZodType);
    expect(schemas.length).toBeGreaterThan(8);
    for (const schema of schemas) agree(schema, [...records, ...blocks]);
  });

  it('agrees with zod on each kind it compiles: bounds, formats, optional and absent keys, strict keys, records, unions', () => {
    const kinds = z.object({
      name: z.string().min(2).max(4),
      count: z.int().nonnegative().optional(),
      ratio: z.number().lt(1).gt(-1).nullable(),
      anything: z.unknown(),
      maybe: z.any().optional(),
      list: z.array(z.boolean()).min(1),
      map: z.record(z.string(), z.literal(['a', 1])).optional(),
      choice: z.union([z.enum(['x', 'y']), z.null()]),
      either: z.union([z.string().min(1), z.array(z.unknown()), z.null()]).optional(),
      blocks: z.array(z.any()).optional(),
      nested: z.strictObject({ at: z.iso.datetime({ offset: true }) }).optional(),
      custom: AnyJsonObject.optional(),
      json: z.json().optional(),
    });
    const valid = { name: 'abc', count: 3, ratio: 0.5, anything: [1], list: [true], map: { k: 'a', n: 1 }, choice: 'x', nested: { at: '2026-12-04T18:00:00Z' }, custom: { a: 1 }, json: { a: [1, 'b', null, { c: false }] }, either: [1], blocks: [{}] };
    agree(kinds, [valid, { ...valid, anything: undefined }, { ...valid, either: 'x' }, { ...valid, either: null }, { name: 'ab', ratio: null, list: [false], choice: null }]);
  });

  it('refuses at compile time what it cannot decide exactly: refinements, transforms, defaults, catchalls, other formats', () => {
    for (const schema of [z.string().refine((s) => s.length > 1), z.string().transform((s) => s.length), z.string().default('x'), z.object({}).catchall(z.string()), z.looseObject({}), z.email(), z.coerce.number(), z.object({ a: z.string() }).refine(() => true)]) {
      expect(() => compileSchema(schema as z.ZodType)).toThrow(/not supported/);
    }
  });

  it('a cyclic value makes the guard throw (the engine turns that into a stand-in), never loop', () => {
    const cyclic: Record<string, unknown> = { type: 'unknown', timestamp: '2026-12-04T18:00:00Z' };
    cyclic.raw = { self: cyclic };
    (cyclic.raw as Record<string, unknown>).again = cyclic.raw;
    expect(() => compileSchema(HarnessEvent)(cyclic)).toThrow(RangeError);
  });
});
