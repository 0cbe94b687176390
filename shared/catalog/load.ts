import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog } from './schema.ts';
import { formatIssues } from '../zod-issues.ts';
import { InvalidInputError } from '../errors.ts';

export const BUNDLED_CATALOG = join(import.meta.dirname, 'models.json');

/** Validates catalogue JSON; errors name the entry and field. */
export function parseCatalog(json: unknown, origin = 'catalogue'): Catalog {
  const parsed = Catalog.safeParse(json);
  if (!parsed.success) throw new InvalidInputError(origin, formatIssues(parsed.error), { cause: parsed.error });
  return parsed.data;
}

const cache = new Map<string, Catalog>();

/** Loads (once per path) the bundled catalogue or a user copy (e.g. from TCAB_MODEL_CATALOG, passed in). */
export function loadCatalog(path: string = BUNDLED_CATALOG): Catalog {
  let catalog = cache.get(path);
  if (!catalog) {
    catalog = parseCatalog(JSON.parse(readFileSync(path, 'utf8')), path);
    cache.set(path, catalog);
  }
  return catalog;
}
