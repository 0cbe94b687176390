// GitHub Copilot CLI adapter: `copilot -p <prompt> --output-format json --allow-all --no-ask-user`.
// api-key mode is Copilot's "bring your own key": COPILOT_OFFLINE plus an OpenAI-compatible provider (the stub, a
// gateway, else OpenRouter) and the key in COPILOT_PROVIDER_API_KEY; no GitHub sign-in, no network but the
// provider. subscription mode uses the signed-in GitHub account and `--model`. Tokens only reach us through the
// usage report file, which the driver reads after the session.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { CopilotTranslator, USAGE_REPORT } from './translator.ts';
import { COPILOT_USAGE_SHAPE } from './usage.ts';

export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';

export function copilotInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [manifest.binary, '-p', request.prompt, '--output-format', 'json', '--allow-all', '--no-ask-user', '--no-auto-update', '--disable-client-telemetry'];
  argv.push('--usage-output-file', `${request.home}/${USAGE_REPORT}`);
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  const env: Record<string, string> = { ...manifest.env };
  if (request.authMode === 'subscription') {
    argv.push('--model', request.model);
  } else {
    Object.assign(env, {
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_BASE_URL: request.baseUrl ? `${request.baseUrl.replace(/\/$/, '')}/v1` : OPENROUTER_BASE_URL,
      COPILOT_MODEL: request.model,
    });
  }
  return { argv, env, stdin: 'close', files: [], reports: [USAGE_REPORT] };
}

export default function copilotAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: COPILOT_USAGE_SHAPE,
    invocation: (request) => copilotInvocation(manifest, request),
    createTranslator: (context) => new CopilotTranslator(context),
  };
}
