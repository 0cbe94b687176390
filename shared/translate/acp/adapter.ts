// A harness driven over ACP (a Run's `protocol: acp`): its own adapter still says how to invoke it (environment,
// config files: the session's setup is the same), but the stream is ACP's, so the translator and usage shape are
// the protocol's, one for every agent.
import type { HarnessAdapter, Invocation } from '../../adapter.ts';
import type { HarnessManifest } from '../../manifest.ts';
import { ACP_USAGE_SHAPE, AcpTranslator } from './translator.ts';
import { InvalidInputError } from '../../errors.ts';

export function acpAdapterOf(adapter: HarnessAdapter): HarnessAdapter {
  return { slug: adapter.slug, usageShape: ACP_USAGE_SHAPE, invocation: adapter.invocation, createTranslator: (context) => new AcpTranslator(context) };
}

/** The ACP start command (the manifest's `[acp] command`, `{model}` filled in) with the stdout invocation's setup. */
export function acpInvocation(manifest: HarnessManifest, stdout: Invocation, model: string): Invocation {
  if (!manifest.acp) throw new Error(`${manifest.slug} has no [acp] section in its manifest`);
  return { ...stdout, argv: manifest.acp.command.map((arg) => arg.replaceAll('{model}', model)), stdin: 'close' };
}

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
