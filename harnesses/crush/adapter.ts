// Crush adapter (best-effort): `crush run` prints the answer as plain text, so every stdout line is `unknown`.
// It prints no usage, cost or session id (stats live in its session DB), so there is nothing for a hook to read.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import type { UsageShape } from '../../shared/usage.ts';
import { bestEffortTranslator } from '../../shared/translate/best-effort.ts';

export const CRUSH_USAGE_SHAPE: UsageShape = {
  classes: [],
  doc: '`crush run` prints no usage (kept in its session database); every class stays null.',
};

export function crushInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // `crush run` auto-approves its own session (app.RunNonInteractive); -q drops the spinner.
  const argv = [manifest.binary, 'run', '--quiet', '--model', request.model, request.prompt];
  return { argv, env: { ...manifest.env }, stdin: 'close', files: [] };
}

export default function crushAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: CRUSH_USAGE_SHAPE,
    invocation: (request) => crushInvocation(manifest, request),
    createTranslator: () => bestEffortTranslator(),
  };
}
