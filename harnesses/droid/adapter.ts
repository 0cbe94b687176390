// Factory Droid adapter: `droid exec -o stream-json --skip-permissions-unsafe -m <model>`. Another endpoint (the
// stub, a gateway) is a BYOK custom model in ~/.factory/settings.json, selected as `custom:<model>`.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { DroidTranslator } from './translator.ts';
import { DROID_USAGE_SHAPE } from './usage.ts';

export function droidInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  let model = request.model;
  const files = [];
  if (request.baseUrl) {
    model = `custom:${request.model}`;
    const settings = {
      customModels: [
        // Droid reads a custom model's key only from this file: the driver fills the placeholder in the private HOME.
        { model: request.model, displayName: request.model, baseUrl: `${request.baseUrl.replace(/\/$/, '')}/v1`, apiKey: API_KEY_PLACEHOLDER, provider: 'generic-chat-completion-api', maxOutputTokens: 8192 },
      ],
    };
    files.push({ path: '.factory/settings.json', content: `${JSON.stringify(settings, null, 2)}\n` });
  }
  const argv = [manifest.binary, 'exec', '-o', 'stream-json', '--skip-permissions-unsafe', '-m', model];
  if (request.resumeSessionId) argv.push('-s', request.resumeSessionId);
  argv.push(request.prompt);
  return { argv, env: { ...manifest.env }, stdin: 'close', files };
}

export default function droidAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: DROID_USAGE_SHAPE,
    invocation: (request) => droidInvocation(manifest, request),
    createTranslator: (context) => new DroidTranslator(context),
  };
}
