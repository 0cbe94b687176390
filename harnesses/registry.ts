// The harness registry: every folder under harnesses/ that holds a harness.toml is a harness. Adding one is
// one new folder (manifest + adapter.ts); nothing here changes. Loading is explicit (no import side effects).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { HarnessManifest } from '../shared/manifest.ts';
import type { HarnessAdapter } from '../shared/adapter.ts';
import { ManifestError, UnknownHarnessError } from '../shared/errors.ts';
import { formatIssues } from '../shared/zod-issues.ts';

export const HARNESSES_DIR = dirname(fileURLToPath(import.meta.url));

export interface HarnessEntry {
  manifest: HarnessManifest;
  dir: string;
}

/** Parses and validates one manifest file; a bad file fails with the file and the field named. */
export function loadManifestFile(file: string): HarnessManifest {
  let data: unknown;
  try {
    data = parseToml(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new ManifestError(file, `not valid TOML: ${(cause as Error).message}`, { cause });
  }
  const parsed = HarnessManifest.safeParse(data);
  if (!parsed.success) throw new ManifestError(file, formatIssues(parsed.error), { cause: parsed.error });
  const folder = dirname(file).split('/').pop();
  if (folder !== parsed.data.slug) {
    throw new ManifestError(file, `slug: "${parsed.data.slug}" must match its folder name "${folder}"`);
  }
  return parsed.data;
}

/** All harnesses with a manifest, sorted by slug. `gg` has no manifest and is listed by its own module. */
export function listHarnesses(root = HARNESSES_DIR): HarnessEntry[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'harness.toml')))
    .map((d) => ({ manifest: loadManifestFile(join(root, d.name, 'harness.toml')), dir: join(root, d.name) }))
    .sort((a, b) => a.manifest.slug.localeCompare(b.manifest.slug));
}

export function getHarness(slug: string, root = HARNESSES_DIR): HarnessEntry {
  const file = join(root, slug, 'harness.toml');
  if (!/^[a-z][a-z0-9-]*$/.test(slug) || !existsSync(file)) {
    throw new UnknownHarnessError(slug, listHarnesses(root).map((h) => h.manifest.slug));
  }
  return { manifest: loadManifestFile(file), dir: join(root, slug) };
}

/** Loads a harness's adapter module (`harnesses/<slug>/adapter.ts`, default export). */
export async function loadAdapter(slug: string, root = HARNESSES_DIR): Promise<HarnessAdapter> {
  const { manifest, dir } = getHarness(slug, root);
  const mod = (await import(join(dir, 'adapter.ts'))) as { default?: (m: HarnessManifest) => HarnessAdapter };
  if (typeof mod.default !== 'function') {
    throw new ManifestError(join(dir, 'adapter.ts'), 'must default-export a function (manifest) => HarnessAdapter');
  }
  return mod.default(manifest);
}
