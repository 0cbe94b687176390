// OpenCode adapter: `opencode run --format json --auto --thinking -m <provider/model>`.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { OpencodeTranslator } from './translator.ts';
import { OPENCODE_USAGE_SHAPE } from './usage.ts';

/** The custom provider a base-URL override defines (OpenAI-compatible chat wire). */
export const OVERRIDE_PROVIDER = 'tcab';

/**
 * The OpenCode family's invocation (OpenCode and its fork Kilo share the `run --format json` surface and the
 * provider config format; only the config file's path differs).
 */
export function opencodeInvocation(manifest: HarnessManifest, request: InvocationRequest, configPath = '.config/opencode/opencode.json'): Invocation {
  let model = request.model;
  let provider: Record<string, unknown> | undefined;
  if (request.baseUrl) {
    // Another endpoint (the stub, a gateway): a custom OpenAI-compatible provider named `tcab`, keyed from the
    // injected variable (never written into the file). A bare model id is served by that provider.
    const providerModel = model.includes('/') ? model.slice(model.indexOf('/') + 1) : model;
    model = `${OVERRIDE_PROVIDER}/${providerModel}`;
    provider = {
      [OVERRIDE_PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'tcab endpoint',
        options: { baseURL: `${request.baseUrl.replace(/\/$/, '')}/v1`, apiKey: `{env:${manifest.auth.api_key?.inject_as ?? 'OPENROUTER_API_KEY'}}` },
        models: { [providerModel]: { name: providerModel } },
      },
    };
  }
  // The model is in the config too: `-m` picks it for `run`, and `opencode acp` (the ACP path) has no model flag.
  const config = { $schema: 'https://opencode.ai/config.json', model, ...(provider ? { provider } : {}) };
  const files = [{ path: configPath, content: `${JSON.stringify(config, null, 2)}\n` }];
  const argv = [manifest.binary, 'run', '--format', 'json', '--auto', '--thinking', '-m', model];
  if (request.resumeSessionId) argv.push('--session', request.resumeSessionId);
  argv.push(request.prompt);
  return { argv, env: { ...manifest.env }, stdin: 'close', files };
}

export default function opencodeAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: OPENCODE_USAGE_SHAPE,
    invocation: (request) => opencodeInvocation(manifest, request),
    createTranslator: (context) => new OpencodeTranslator(context),
  };
}
