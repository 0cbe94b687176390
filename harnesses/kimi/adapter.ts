// Kimi Code adapter: `kimi --prompt=<prompt> --output-format stream-json` (prompt mode implies auto-approve), the
// model set up by environment only (KIMI_MODEL_NAME/_API_KEY/_PROVIDER_TYPE/_BASE_URL: an OpenAI-compatible
// endpoint, OpenRouter unless the stub or the gateway is given). Kimi's home (KIMI_CODE_HOME) is inside the run's
// HOME. Tokens are not on stdout: a Stop hook copies them from the session's wire file into a report in HOME
// (usage-hook.ts), which the driver reads after the session.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { KimiTranslator } from './translator.ts';
import { KIMI_USAGE_SHAPE } from './usage.ts';
import { CONFIG_TOML, HOOK_SCRIPT, HOOK_SOURCE, USAGE_REPORT } from './usage-hook.ts';

export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
/** Kimi's home below the run HOME (its default is ~/.kimi-code too; named so nothing depends on the default). */
export const KIMI_HOME_DIR = '.kimi-code';

export function kimiInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // `--prompt=<text>` keeps a prompt starting with `-` from being read as an option.
  const argv = [manifest.binary, `--prompt=${request.prompt}`, '--output-format', 'stream-json'];
  if (request.resumeSessionId) argv.push('--session', request.resumeSessionId);
  const env: Record<string, string> = {
    ...manifest.env,
    KIMI_CODE_HOME: `${request.home.replace(/\/$/, '')}/${KIMI_HOME_DIR}`,
    KIMI_MODEL_NAME: request.model,
    KIMI_MODEL_PROVIDER_TYPE: 'openai',
    KIMI_MODEL_BASE_URL: request.baseUrl ? `${request.baseUrl.replace(/\/$/, '')}/v1` : OPENROUTER_BASE_URL,
  };
  return {
    argv,
    env,
    stdin: 'close',
    files: [
      { path: `${KIMI_HOME_DIR}/config.toml`, content: CONFIG_TOML },
      { path: HOOK_SCRIPT, content: HOOK_SOURCE },
    ],
    reports: [USAGE_REPORT],
  };
}

export default function kimiAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: KIMI_USAGE_SHAPE,
    invocation: (request) => kimiInvocation(manifest, request),
    createTranslator: (context) => new KimiTranslator(context),
  };
}
