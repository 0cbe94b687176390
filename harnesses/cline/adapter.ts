// Cline CLI adapter: `cline --json "<prompt>"` (headless, auto-approve on by default). Cline takes its provider,
// model, key and endpoint from ~/.cline/data/settings/providers.json (what `cline auth` writes); the key is the
// placeholder the driver fills in the private HOME. Cline ignores provider base-URL variables.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { ClineTranslator } from './translator.ts';
import { CLINE_USAGE_SHAPE } from './usage.ts';

export function clineInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const provider = request.baseUrl ? 'openai-compatible' : 'openrouter';
  const settings = {
    provider,
    apiKey: API_KEY_PLACEHOLDER,
    model: request.model,
    ...(request.baseUrl ? { baseUrl: `${request.baseUrl.replace(/\/$/, '')}/v1` } : {}),
  };
  const providers = { version: 1, lastUsedProvider: provider, modes: {}, providers: { [provider]: { settings, updatedAt: '1970-01-01T00:00:00.000Z', tokenSource: 'manual' } } };
  const argv = [manifest.binary, '--json'];
  if (request.resumeSessionId) argv.push('--id', request.resumeSessionId);
  // A one-word prompt is parsed as a sub-command by Cline 3.x; multi-word prompts are the documented form.
  argv.push(request.prompt);
  return { argv, env: { ...manifest.env }, stdin: 'close', files: [{ path: '.cline/data/settings/providers.json', content: `${JSON.stringify(providers, null, 2)}\n` }] };
}

export default function clineAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: CLINE_USAGE_SHAPE,
    invocation: (request) => clineInvocation(manifest, request),
    createTranslator: (context) => new ClineTranslator(context),
  };
}
