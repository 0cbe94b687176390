// The model catalogue: canonical OpenRouter-style ids, the aliases each harness family writes, list prices per
// token class (USD per million tokens) and where each price came from. Data: models.json beside this file.
import { z } from 'zod';

export const ID_FAMILIES = ['anthropic', 'openai', 'google', 'qwen', 'openrouter', 'deepseek', 'moonshotai', 'z-ai', 'x-ai'] as const;
export type IdFamily = (typeof ID_FAMILIES)[number];

const perMillion = z.number().nonnegative();

export const ModelPrices = z.strictObject({
  input: perMillion,
  output: perMillion,
  /** Absent = the provider has no cache-read price: such tokens are unpriced, never silently $0. */
  cache_read: perMillion.optional(),
  cache_write: perMillion.optional(),
});
export type ModelPrices = z.infer<typeof ModelPrices>;

export const CatalogEntry = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+\/[A-Za-z0-9._:-]+$/, 'must be an OpenRouter-style vendor/model id'),
  name: z.string().min(1),
  aliases: z.array(z.strictObject({ id: z.string().min(1), family: z.enum(ID_FAMILIES) })).default([]),
  prices: ModelPrices,
  source: z.strictObject({ name: z.string().min(1), url: z.url(), retrieved: z.iso.date() }),
});
export type CatalogEntry = z.infer<typeof CatalogEntry>;

export const Catalog = z
  .strictObject({
    version: z.string().min(1),
    generated_at: z.iso.date(),
    entries: z.array(CatalogEntry).min(1),
  })
  .superRefine((catalog, ctx) => {
    const ids = new Map<string, number>();
    const aliases = new Map<string, number>();
    catalog.entries.forEach((entry, i) => {
      if (ids.has(entry.id)) ctx.addIssue({ code: 'custom', path: ['entries', i, 'id'], message: `duplicate id "${entry.id}" (also entries[${ids.get(entry.id)}])` });
      ids.set(entry.id, i);
      entry.aliases.forEach((alias, j) => {
        const key = `${alias.family}:${alias.id}`;
        if (aliases.has(key)) ctx.addIssue({ code: 'custom', path: ['entries', i, 'aliases', j], message: `alias "${alias.id}" of family ${alias.family} also belongs to entries[${aliases.get(key)}]` });
        aliases.set(key, i);
      });
    });
  });
export type Catalog = z.infer<typeof Catalog>;
