// Credential materialisation (spec: "Subscription credential sources"): the I/O half of auth. An API key is
// injected under the harness's variable only; subscription files are copied into the run user's fresh HOME at the
// CLI's paths (mode 0600), from the user's home (workstation) or a mounted directory keyed by basename (the
// operator's Secret in a driver Pod). Nothing is ever written to the test-case workspace, and the copies (with
// any refresh the CLI writes) are discarded with the run's HOME. The copy never follows a link the run user planted
// in HOME (confined-fs.ts).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { writeConfinedFile } from './confined-fs.ts';
import type { AvailableAuthResolution } from '../shared/auth.ts';

export type CredentialSource = { kind: 'home'; home: string } | { kind: 'mounted'; dir: string };

export interface MaterializedCredentials {
  /** Exactly what the harness process gets: `{ [injectAs]: key, ...injectEnv }`, or nothing. */
  env: Record<string, string>;
  /** Every secret value handled (the key; token-like strings inside copied files), for the scrubber. */
  secrets: string[];
  files: string[];
}

export class CredentialError extends Error {
  override name = 'CredentialError';
}

function sourcePath(source: CredentialSource, homeRelative: string): string {
  return source.kind === 'home' ? join(source.home, homeRelative) : join(source.dir, basename(homeRelative));
}

/** Presence from metadata only: existsSync never opens the file. */
export function credentialPresenceChecker(source: CredentialSource): (homeRelativePath: string) => boolean {
  return (path) => existsSync(sourcePath(source, path));
}

/** String leaves of a JSON credential file that look like tokens (long, no spaces), for scrubbing. */
export function tokenLikeValues(text: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return trimmed.length >= 16 && !/\s/.test(trimmed) ? [trimmed] : [];
  }
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      if (v.length >= 16 && !/\s/.test(v)) out.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(data);
  return out;
}

export async function materializeCredentials(
  resolution: AvailableAuthResolution,
  options: { env: Readonly<Record<string, string | undefined>>; source: CredentialSource; runHome: string; runUid?: number; runGid?: number },
): Promise<MaterializedCredentials> {
  if (resolution.mode === 'api-key') {
    const key = options.env[resolution.keyVar];
    if (!key) throw new CredentialError(`${resolution.keyVar} is no longer set`);
    return { env: { [resolution.injectAs]: key, ...resolution.injectEnv }, secrets: [key], files: [] };
  }
  const secrets: string[] = [];
  const files: string[] = [];
  const home = resolve(options.runHome);
  for (const homeRelative of resolution.files) {
    const target = resolve(home, homeRelative);
    if (relative(home, target).startsWith('..')) throw new CredentialError(`credential path ${homeRelative} escapes the run home`);
    const from = sourcePath(options.source, homeRelative);
    if (!existsSync(from)) throw new CredentialError(`credential file ${from} is missing`);
    // The source is the operator's; the run HOME is the run user's (the install ran there): confined write.
    const content = await readFile(from);
    await writeConfinedFile(home, relative(home, target), content, { mode: 0o600, dirMode: 0o700, owner: { uid: options.runUid, gid: options.runGid } });
    secrets.push(...tokenLikeValues(content.toString('utf8')));
    files.push(target);
  }
  return { env: {}, secrets, files };
}
