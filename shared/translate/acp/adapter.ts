// A harness driven over ACP (a Run's `protocol: acp`): its own adapter still says how to invoke it (environment,
// config files: the session's setup is the same), but the stream is ACP's, so the translator and usage shape are
// the protocol's, one for every agent.
import type { HarnessAdapter, Invocation } from '../../adapter.ts';
import type { HarnessManifest } from '../../manifest.ts';
import { ACP_USAGE_SHAPE, AcpTranslator } from './translator.ts';

export function acpAdapterOf(adapter: HarnessAdapter): HarnessAdapter {
  return { slug: adapter.slug, usageShape: ACP_USAGE_SHAPE, invocation: adapter.invocation, createTranslator: (context) => new AcpTranslator(context) };
}

/** The ACP start command (the manifest's `[acp] command`, `{model}` filled in) with the stdout invocation's setup. */
export function acpInvocation(manifest: HarnessManifest, stdout: Invocation, model: string): Invocation {
  if (!manifest.acp) throw new Error(`${manifest.slug} has no [acp] section in its manifest`);
  return { ...stdout, argv: manifest.acp.command.map((arg) => arg.replaceAll('{model}', model)), stdin: 'close' };
}

