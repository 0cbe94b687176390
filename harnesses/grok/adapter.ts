// Grok adapter: `grok --single=<prompt> -m <model> --output-format streaming-json --always-approve
// --no-auto-update`, in the workspace (the driver's cwd). The key is XAI_API_KEY (Bearer); the stub or a gateway is
// reached through GROK_MODELS_BASE_URL (<base>/v1: Grok lists models from <base>/v1/models and calls
// <base>/v1/chat/completions for a listed model; a model the list lacks fails with "unknown model id", never falls
// back to another). Grok's home (GROK_HOME) is ~/.grok in the run's HOME, where each session writes
// sessions/<url-encoded cwd>/<session id>/updates.jsonl: the tool calls stdout lacks, tailed as a side file.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { GrokTranslator, UPDATES } from './translator.ts';
import { GROK_USAGE_SHAPE } from './usage.ts';

/** Grok's home below the run HOME (its default is ~/.grok too; named so nothing depends on the default). */
export const GROK_HOME_DIR = '.grok';
/** Every session's updates.jsonl, the main one's and its subagents' (sessions of their own beside it). */
export const UPDATES_PATH = `${GROK_HOME_DIR}/sessions/*/*/updates.jsonl`;

export function grokInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  // `--single=<text>` keeps a prompt starting with `-` from being read as an option.
  const argv = [manifest.binary, `--single=${request.prompt}`, '-m', request.model, '--output-format', 'streaming-json', '--always-approve', '--no-auto-update'];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  const env: Record<string, string> = {
    ...manifest.env,
    GROK_HOME: `${request.home.replace(/\/$/, '')}/${GROK_HOME_DIR}`,
    // The session title is a side call to another model (grok-4.5 over the Responses API by default): the run's
    // model writes it, so a run calls only the model it was given.
    GROK_SESSION_SUMMARY_MODEL: request.model,
  };
  if (request.baseUrl) env.GROK_MODELS_BASE_URL = `${request.baseUrl.replace(/\/$/, '')}/v1`;
  return { argv, env, stdin: 'close', files: [], sideFiles: [{ name: UPDATES, path: UPDATES_PATH, read: 'lines' }] };
}

export default function grokAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: GROK_USAGE_SHAPE,
    invocation: (request) => grokInvocation(manifest, request),
    createTranslator: (context) => new GrokTranslator(context),
  };
}
