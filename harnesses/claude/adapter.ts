// Claude Code adapter: non-interactive invocation, usage shape, and the stream-json translator.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { ClaudeTranslator } from './translator.ts';
import { CLAUDE_USAGE_SHAPE } from './usage.ts';

export function claudeInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [
    manifest.binary,
    '-p',
    request.prompt,
    '--model',
    request.model,
    // stream-json requires --verbose in -p mode (exit 1 otherwise).
    '--output-format',
    'stream-json',
    '--verbose',
    // Runs are unattended in a throw-away workspace; Claude refuses this flag as root, so the driver runs
    // the session as an unprivileged user.
    '--dangerously-skip-permissions',
  ];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  const env: Record<string, string> = { ...manifest.env };
  if (request.baseUrl && manifest.auth.base_url_var) env[manifest.auth.base_url_var] = request.baseUrl;
  return { argv, env, stdin: 'close', files: [] };
}

export default function claudeAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: CLAUDE_USAGE_SHAPE,
    invocation: (request) => claudeInvocation(manifest, request),
    createTranslator: (context) => new ClaudeTranslator(context),
  };
}
