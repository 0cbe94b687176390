// goose adapter: non-interactive invocation, usage shape, and the stream-json translator.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { GooseTranslator } from './translator.ts';
import { GOOSE_USAGE_SHAPE } from './usage.ts';

export function gooseInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [
    manifest.binary,
    'run',
    // A fresh HOME has no config.yaml, so the developer tools (shell/write/edit/tree) are enabled explicitly.
    '--with-builtin',
    'developer',
    '--output-format',
    'stream-json',
    '--text',
    request.prompt,
  ];
  // No resume: stream-json reports no session id to resume by. No base URL: the OpenRouter provider's endpoint
  // override is UNVERIFIED, so none is set.
  const env: Record<string, string> = { ...manifest.env, GOOSE_MODEL: request.model };
  return { argv, env, stdin: 'close', files: [] };
}

export default function gooseAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: GOOSE_USAGE_SHAPE,
    invocation: (request) => gooseInvocation(manifest, request),
    createTranslator: (context) => new GooseTranslator(context),
  };
}
