// OpenHands CLI adapter: `openhands --headless --json --override-with-envs --task=<prompt>` (headless mode always
// auto-approves), the model set up by environment only (LLM_MODEL in LiteLLM's naming, LLM_BASE_URL, and the key
// injected as LLM_API_KEY), honoured only with --override-with-envs. Its state dir, ~/.openhands (settings,
// conversations, the skills cache), is inside the run's HOME. Tokens are not on stdout: the conversation's
// base_state.json is read as a side file after the session.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { OpenHandsTranslator, STATE_PATH, STATE_SIDE_FILE } from './translator.ts';
import { OPENHANDS_USAGE_SHAPE } from './usage.ts';

/** LiteLLM's provider every run goes through (the manifest's key is an OpenRouter key). */
export const LITELLM_PROVIDER = 'openrouter';

/** Our model id (OpenRouter's) as LiteLLM's: `openrouter/<id>`; an id already written so is kept. */
export function liteLlmModel(model: string): string {
  return model.startsWith(`${LITELLM_PROVIDER}/`) ? model : `${LITELLM_PROVIDER}/${model}`;
}

export function openHandsInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // `--task=<text>` keeps a prompt starting with `-` from being read as an option.
  const argv = [manifest.binary, '--headless', '--json', '--override-with-envs', `--task=${request.prompt}`];
  if (request.resumeSessionId) argv.push(`--resume=${request.resumeSessionId}`);
  const env: Record<string, string> = { ...manifest.env, LLM_MODEL: liteLlmModel(request.model) };
  // LiteLLM's OpenRouter provider posts to <base>/chat/completions; without a base URL it goes to OpenRouter itself.
  if (request.baseUrl) env.LLM_BASE_URL = `${request.baseUrl.replace(/\/$/, '')}/v1`;
  return { argv, env, stdin: 'close', files: [], sideFiles: [{ name: STATE_SIDE_FILE, path: STATE_PATH, read: 'document' }] };
}

export default function openHandsAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: OPENHANDS_USAGE_SHAPE,
    // base_state.json holds the whole conversation's totals: a resumed conversation's include its earlier sessions.
    usageScope: 'thread',
    invocation: (request) => openHandsInvocation(manifest, request),
    createTranslator: (context) => new OpenHandsTranslator(context),
  };
}
