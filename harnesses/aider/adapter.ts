// Aider adapter (best-effort): every stdout line is surfaced as `unknown`; a hook reads the documented
// "Tokens: … Cost: …" lines into the session's usage and cost without classifying any line.
import type { HarnessAdapter, Invocation, InvocationRequest, SessionTranslator } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { bestEffortTranslator } from '../../shared/translate/best-effort.ts';
import { AIDER_USAGE_SHAPE, aiderTokens, parseUsageLine } from './usage.ts';
import type { AiderUsageLine } from './usage.ts';

/** The variable litellm's OpenRouter provider takes its base URL from (default https://openrouter.ai/api/v1). */
export const OPENROUTER_BASE_VAR = 'OPENROUTER_API_BASE';

export function aiderInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [
    manifest.binary,
    '--message', // one message, then exit
    request.prompt,
    '--model',
    request.model,
    '--yes-always', // unattended: answer every confirmation with yes
    '--no-auto-commits', // the workspace's git history is the test case's, not aider's
    '--no-pretty', // plain text, no colours or boxes
    // Whole responses: only then does aider's "Tokens:" line carry the API's own usage (prompt/completion tokens,
    // cache hits); while streaming it counts tokens itself with the model's tokenizer (coders/base_coder.py).
    '--no-stream',
    // Offline and quiet (aider/args.py; reference table D).
    '--analytics-disable',
    '--no-check-update',
    '--no-show-release-notes',
    '--no-show-model-warnings',
  ];
  const env: Record<string, string> = { ...manifest.env };
  // Another endpoint (the stub, the model gateway): the same litellm OpenRouter provider, pointed at <base>/v1, keeps
  // the `openrouter/…` model id and the OpenRouter key's variable (litellm docs, providers/openrouter).
  if (request.baseUrl) env[OPENROUTER_BASE_VAR] = `${request.baseUrl.replace(/\/$/, '')}/v1`;
  return { argv, env, stdin: 'close', files: [] };
}

export function aiderTranslator(): SessionTranslator {
  const lines: AiderUsageLine[] = [];
  return bestEffortTranslator({
    observe(line, result) {
      if (line.json !== undefined) return;
      const usage = parseUsageLine(line.text);
      if (!usage) return;
      lines.push(usage);
      result.tokens = aiderTokens(lines);
      result.raw_usage = lines.map((l) => ({ ...l }));
      // aider's "Cost: $… session" is litellm's list-price estimate, not a charge: kept in raw usage only, so
      // the run's actual cost is never an estimate trusted as exact (comparable cost comes from the catalogue).
    },
  });
}

export default function aiderAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: AIDER_USAGE_SHAPE,
    invocation: (request) => aiderInvocation(manifest, request),
    createTranslator: () => aiderTranslator(),
  };
}
