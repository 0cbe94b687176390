// Cursor CLI adapter: non-interactive invocation, usage shape, and the stream-json translator.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { CursorTranslator } from './translator.ts';
import { CURSOR_USAGE_SHAPE } from './usage.ts';

export function cursorInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [
    manifest.binary,
    '-p', // --print: non-interactive
    '--output-format',
    'stream-json', // one line per complete assistant message (no --stream-partial-output deltas)
    '--model',
    request.model,
    // Headless runs must trust the workspace; --trust alone still rejects shell calls, --force allows them.
    '--trust',
    '--force',
  ];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  argv.push(request.prompt);
  // No base URL: Cursor only talks to its own backend (`--endpoint` is Cursor's API, not a model endpoint).
  return { argv, env: { ...manifest.env }, stdin: 'close', files: [] };
}

export default function cursorAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: CURSOR_USAGE_SHAPE,
    invocation: (request) => cursorInvocation(manifest, request),
    createTranslator: (context) => new CursorTranslator(context),
  };
}
