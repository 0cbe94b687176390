// The harness registry: every folder under harnesses/ that holds a harness.toml is a harness, plus the built-ins
// (harnesses shipped as code, listed below, each a descriptor in its own folder). Adding an installed harness is
// one new folder (manifest + adapter.ts); nothing here changes. Loading is explicit (no import side effects).
// Everything that needs a harness (the driver, the dispatcher, `tcab run`, `tcab harnesses`) finds it here, once:
// a manifest file is parsed and validated once per process (again only when the file changed: the dispatcher looks
// a harness up on every claim) and resolveHarness gives a run its manifest and adapter in one lookup.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
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

/** Parsed manifests by file, with the size and mtime they were read at: a file changed since is read again. */
const parsedManifests = new Map<string, { size: number; mtimeMs: number; manifest: HarnessManifest }>();

/** Parses and validates one manifest file (memoised while the file is unchanged); a bad file fails with the file and the field named. */
export function loadManifestFile(file: string): HarnessManifest {
  const { size, mtimeMs } = statSync(file);
  const known = parsedManifests.get(file);
  if (known && known.size === size && known.mtimeMs === mtimeMs) return known.manifest;
  const manifest = parseManifestFile(file);
  parsedManifests.set(file, { size, mtimeMs, manifest });
  return manifest;
}

function parseManifestFile(file: string): HarnessManifest {
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
  return adapterOf(getHarness(slug, root));
}

/** A harness as a run uses it: the manifest for the run's model and the adapter. */
export interface ResolvedHarness {
  entry: HarnessEntry;
  manifest: HarnessManifest;
  adapter: HarnessAdapter;
}

/** One lookup of `slug` for a run of `model`; an unknown slug is UnknownHarnessError (naming the known ones). */
export async function resolveHarness(slug: string, model: string, root = HARNESSES_DIR): Promise<ResolvedHarness> {
  const entry = getHarness(slug, root);
  return { entry, manifest: manifestForModel(entry, model), adapter: await adapterOf(entry) };
}

async function adapterOf({ manifest, dir }: HarnessEntry): Promise<HarnessAdapter> {
  const mod = (await import(join(dir, 'adapter.ts'))) as { default?: (m: HarnessManifest) => HarnessAdapter };
  if (typeof mod.default !== 'function') {
    throw new ManifestError(join(dir, 'adapter.ts'), 'must default-export a function (manifest) => HarnessAdapter');
  }
  return mod.default(manifest);
}
