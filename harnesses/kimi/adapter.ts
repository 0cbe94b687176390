// Kimi Code adapter: `kimi --prompt=<prompt> --output-format stream-json` (prompt mode implies auto-approve), the
// model set up by environment only (KIMI_MODEL_NAME/_API_KEY/_PROVIDER_TYPE/_BASE_URL: an OpenAI-compatible
// endpoint, OpenRouter unless the stub or the gateway is given). Kimi's home (KIMI_CODE_HOME) is inside the run's
// HOME. Tokens are not on stdout: they are in the session's wire files (one per agent, below
// sessions/<workspace>/<session id>/agents/), which the driver tails live as the `wire` side file (usage.ts).
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { KimiTranslator, WIRE } from './translator.ts';
import { KIMI_USAGE_SHAPE } from './usage.ts';

export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
/** Kimi's home below the run HOME (its default is ~/.kimi-code too; named so nothing depends on the default). */
export const KIMI_HOME_DIR = '.kimi-code';
/** Every agent's wire file of every session (workspace hash, session id, agent name are Kimi's). */
export const WIRE_PATH = `${KIMI_HOME_DIR}/sessions/*/*/agents/*/wire.jsonl`;

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
    files: [],
    sideFiles: [{ name: WIRE, path: WIRE_PATH, read: 'lines' }],
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
