// Amp adapter: non-interactive invocation, usage shape, and the stream-json translator.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { AmpTranslator } from './translator.ts';
import { AMP_USAGE_SHAPE } from './usage.ts';

/** `amp --help`: settings live in ~/.config/amp/settings.json, every key prefixed `amp.`. */
const SETTINGS = {
  'amp.updates.mode': 'disabled', // no self-update mid-run (reference table D)
  'amp.dangerouslyAllowAll': true, // the documented setting behind --dangerously-allow-all
};

export function ampInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // Resuming continues the thread (ampcode.com/news/streaming-json); its mode was fixed when it started.
  const argv = request.resumeSessionId
    ? [manifest.binary, 'threads', 'continue', request.resumeSessionId]
    : [manifest.binary, '--mode', request.model];
  argv.push(
    // Unattended runs in a throw-away workspace; accepted by 0.0.1790142911 though absent from --help.
    '--dangerously-allow-all',
    '--execute',
    request.prompt,
    '--stream-json',
    '--stream-json-thinking', // thinking blocks -> reasoning events
  );
  return {
    argv,
    env: { ...manifest.env },
    stdin: 'close',
    files: [{ path: '.config/amp/settings.json', content: `${JSON.stringify(SETTINGS, null, 2)}\n` }],
  };
}

export default function ampAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: AMP_USAGE_SHAPE,
    invocation: (request) => ampInvocation(manifest, request),
    createTranslator: (context) => new AmpTranslator(context),
  };
}
