// Gemini CLI adapter: headless `-p` with stream-json, yolo approval in a trusted workspace, model pinned.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { GeminiTranslator } from './translator.ts';
import { GEMINI_USAGE_SHAPE } from './usage.ts';

export function geminiInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // -m is always given: the default "auto" adds a classifier model call per turn, making runs incomparable.
  const argv = [manifest.binary, '-p', request.prompt, '-m', request.model, '--output-format', 'stream-json', '--yolo'];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  const env: Record<string, string> = { ...manifest.env };
  const settings: Record<string, unknown> = {
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  };
  if (request.baseUrl && manifest.auth.base_url_var) {
    env[manifest.auth.base_url_var] = request.baseUrl.replace(/\/$/, '');
    // 0.61: a base URL makes the env-derived auth type "gateway", which headless mode rejects (exit 41);
    // selecting API-key auth in settings keeps the base URL honoured.
    settings.security = { auth: { selectedType: 'gemini-api-key' } };
  }
  return { argv, env, stdin: 'close', files: [{ path: '.gemini/settings.json', content: `${JSON.stringify(settings, null, 2)}\n` }] };
}

export default function geminiAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: GEMINI_USAGE_SHAPE,
    invocation: (request) => geminiInvocation(manifest, request),
    createTranslator: (context) => new GeminiTranslator(context),
  };
}
