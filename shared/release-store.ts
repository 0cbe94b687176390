// The node-local release store's on-disk shapes (driver/stages/release-store.ts): which published release an entry
// holds, and every entry of its installed tree with the digest the next run checks before it runs any of it.
import { z } from 'zod';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');
/** A path inside the installed prefix: relative, no '.' or '..' segment, no empty segment, no NUL. */
const treePath = z.string().min(1).max(4096).refine((p) => !p.startsWith('/') && !p.includes('\0') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'), 'must be a relative path inside the prefix');

/**
 * One published release as the registry described it at run time: the package, the version resolved as the newest,
 * and the registry's integrity of its tarball (and of the per-platform binary package, for a CLI that ships one).
 * The install command is part of it: a manifest that installs differently makes a different entry.
 */
export const ReleaseId = z.strictObject({
  slug: z.string().min(1),
  package: z.string().min(1),
  version: z.string().min(1),
  integrity: z.string().min(1),
  platform: z.strictObject({ package: z.string().min(1), integrity: z.string().min(1) }).optional(),
  command: z.array(z.string()),
});
export type ReleaseId = z.infer<typeof ReleaseId>;

export const StoreEntry = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('dir'), path: treePath }),
  z.strictObject({ kind: z.literal('file'), path: treePath, mode: z.int().min(0).max(0o777), size: z.int().min(0), sha256: sha256Hex }),
  // A second name of a file stored earlier in the walk (a hard link: Claude Code's postinstall links its binary).
  z.strictObject({ kind: z.literal('link'), path: treePath, target: treePath }),
  z.strictObject({ kind: z.literal('symlink'), path: treePath, target: z.string().min(1).max(4096).refine((t) => !t.includes('\0'), 'must not hold NUL') }),
]);
export type StoreEntry = z.infer<typeof StoreEntry>;

/** `<store>/<key>/manifest.json`: parents come before their children. */
export const StoreManifest = z.strictObject({
  format: z.literal(1),
  release: ReleaseId,
  entries: z.array(StoreEntry).max(200_000),
  files: z.int().min(0),
  bytes: z.int().min(0),
  stored_at: z.iso.datetime(),
});
export type StoreManifest = z.infer<typeof StoreManifest>;
