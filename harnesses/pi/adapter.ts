// Pi adapter: `pi -p --mode json --provider openrouter --model <id> --offline`, the prompt on stdin.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { PiTranslator } from './translator.ts';
import { PI_USAGE_SHAPE } from './usage.ts';

/** Pi's built-in provider every run goes through (the manifest's key is an OpenRouter key). */
export const PI_PROVIDER = 'openrouter';
/** Pi's config file below HOME (its config dir is ~/.pi/agent unless PI_CODING_AGENT_DIR says otherwise). */
export const MODELS_FILE = '.pi/agent/models.json';

/** Our model id as Pi's OpenRouter model id: an `openrouter/` routing prefix goes, the rest is Pi's `--model`. */
export function piModelId(model: string): string {
  return model.startsWith(`${PI_PROVIDER}/`) ? model.slice(PI_PROVIDER.length + 1) : model;
}

export function piInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const files = [];
  if (request.baseUrl) {
    // Pi takes no base-URL variable. Overriding only the built-in provider's baseUrl keeps Pi's own model table
    // (context window, reasoning, prices) as against OpenRouter itself; Pi appends /chat/completions. The key stays
    // in the environment (OPENROUTER_API_KEY), never in the file.
    const models = { providers: { [PI_PROVIDER]: { baseUrl: `${request.baseUrl.replace(/\/$/, '')}/v1` } } };
    files.push({ path: MODELS_FILE, content: `${JSON.stringify(models, null, 2)}\n` });
  }
  // No --no-session: a continued session resumes the saved one by id (the run's HOME is thrown away anyway).
  const argv = [manifest.binary, '-p', '--mode', 'json', '--provider', PI_PROVIDER, '--model', piModelId(request.model), '--offline'];
  if (request.resumeSessionId) argv.push('--session', request.resumeSessionId);
  // The prompt goes on stdin (Pi's print mode reads piped stdin as the message): as an argument, one starting with
  // `-` would be read as an option and one starting with `@` as a file to attach.
  return { argv, env: { ...manifest.env }, stdin: { text: request.prompt }, files };
}

export default function piAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: PI_USAGE_SHAPE,
    invocation: (request) => piInvocation(manifest, request),
    createTranslator: (context) => new PiTranslator(context),
  };
}
