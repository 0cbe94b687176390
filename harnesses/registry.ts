// The harness registry: every folder under harnesses/ that holds a harness.toml is a harness, plus the built-ins
// (harnesses shipped as code, listed below, each a descriptor in its own folder). Adding an installed harness is
// one new folder (manifest + adapter.ts); nothing here changes. Loading is explicit (no import side effects).
// Everything that needs a harness (the driver, the dispatcher, `tcab run`, `tcab harnesses`) finds it here.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { HarnessManifest } from '../shared/manifest.ts';
import type { HarnessAdapter } from '../shared/adapter.ts';
import { ManifestError, UnknownHarnessError } from '../shared/errors.ts';
import { formatIssues } from '../shared/zod-issues.ts';
import { GG_DIR, ggManifest } from './gg/descriptor.ts';

export const HARNESSES_DIR = dirname(fileURLToPath(import.meta.url));

export interface HarnessEntry {
  /** The manifest for listings and readiness (a built-in's is the one that fits any model). */
  manifest: HarnessManifest;
  dir: string;
  /** A built-in whose manifest depends on the run's model (gg: the provider's key and wire). */
  forModel?: (model: string) => HarnessManifest;
}

/** Harnesses shipped as code: a descriptor instead of a harness.toml, found in any registry root. */
const BUILT_IN: readonly { dir: string; manifest: (model?: string) => HarnessManifest }[] = [{ dir: GG_DIR, manifest: ggManifest }];

let builtInEntries: HarnessEntry[] | undefined;
const builtIns = (): HarnessEntry[] => (builtInEntries ??= BUILT_IN.map((b) => ({ manifest: b.manifest(), dir: b.dir, forModel: (model) => b.manifest(model) })));

/** The manifest a run of `model` uses. */
export function manifestForModel(entry: HarnessEntry, model: string): HarnessManifest {
  return entry.forModel ? entry.forModel(model) : entry.manifest;
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
  if (parsed.data.builtin) throw new ManifestError(file, 'builtin: only a built-in descriptor sets it; a harness.toml gives install');
  return parsed.data;
}

/** All harnesses, sorted by slug: the folders of `root` with a harness.toml and the built-ins. */
export function listHarnesses(root = HARNESSES_DIR): HarnessEntry[] {
  const installed = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'harness.toml')))
    .map((d) => ({ manifest: loadManifestFile(join(root, d.name, 'harness.toml')), dir: join(root, d.name) }));
  return [...installed, ...builtIns()].sort((a, b) => a.manifest.slug.localeCompare(b.manifest.slug));
}

export function getHarness(slug: string, root = HARNESSES_DIR): HarnessEntry {
  const builtIn = builtIns().find((b) => b.manifest.slug === slug);
  if (builtIn) return builtIn;
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
