// How a run talks to its harness (issue 41): its own stdout stream, or the Agent Client Protocol. Pure, shared by the
// dispatcher (which refuses a Run asking for what its harness cannot do) and the driver.
import { InvalidInputError } from './errors.ts';
import type { HarnessManifest } from './manifest.ts';

/**
 * How a run talks to its harness: the Run's `protocol`, else the manifest's default. ACP needs the manifest's [acp]
 * section, and drives one session (a continued ACP session would replay the earlier turns as updates).
 */
export function runProtocol(spec: { protocol?: 'stdout' | 'acp'; sessions: number }, manifest: HarnessManifest): 'stdout' | 'acp' {
  const protocol = spec.protocol ?? (manifest.acp?.default ? 'acp' : 'stdout');
  if (protocol === 'acp' && !manifest.acp) throw new InvalidInputError('spec.protocol', `"acp": ${manifest.slug} does not speak the Agent Client Protocol (its manifest has no [acp] section)`);
  if (protocol === 'acp' && spec.sessions > 1) throw new InvalidInputError('spec.sessions', `${spec.sessions}: a run over ACP drives one session`);
  return protocol;
}
