// Codex CLI adapter: `codex exec --json` non-interactive invocation, usage shape, translator.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { CodexTranslator } from './translator.ts';
import { CODEX_USAGE_SHAPE } from './usage.ts';

/** TOML basic string (the base URL is the only value we interpolate). */
const tomlString = (s: string) => JSON.stringify(s);

export function codexInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const flags = [
    '--json',
    '--skip-git-repo-check',
    // Runs are already isolated (throw-away workspace, unprivileged user); Codex's own Linux sandbox does not
    // work in most containers.
    '--dangerously-bypass-approvals-and-sandbox',
    '-c',
    'analytics.enabled=false',
    '-c',
    'check_for_update_on_startup=false',
    '-m',
    request.model,
  ];
  const argv = request.resumeSessionId
    ? [manifest.binary, 'exec', ...flags, 'resume', request.resumeSessionId, request.prompt]
    : [manifest.binary, 'exec', ...flags, request.prompt];
  const files = [];
  if (request.baseUrl) {
    // A custom provider is the only way to point Codex elsewhere (OPENAI_BASE_URL is not honoured, and the
    // built-in provider tries WebSockets first). It must speak the Responses API; the key comes from the
    // injected variable, never from this file.
    files.push({
      path: '.codex/config.toml',
      content: [
        'model_provider = "tcab"',
        '',
        '[model_providers.tcab]',
        'name = "tcab"',
        `base_url = ${tomlString(`${request.baseUrl.replace(/\/$/, '')}/v1`)}`,
        `env_key = ${tomlString(manifest.auth.api_key?.inject_as ?? 'CODEX_API_KEY')}`,
        'wire_api = "responses"',
        '',
      ].join('\n'),
    });
  }
  // Codex appends a non-TTY stdin to the prompt: it must see a closed stdin.
  return { argv, env: { ...manifest.env }, stdin: 'close', files };
}

export default function codexAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: CODEX_USAGE_SHAPE,
    usageScope: 'thread',
    invocation: (request) => codexInvocation(manifest, request),
    createTranslator: () => new CodexTranslator(),
  };
}
