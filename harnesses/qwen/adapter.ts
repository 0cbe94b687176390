// Qwen Code adapter: one-shot positional prompt with stream-json output, yolo approval, OpenAI-compatible auth.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { QwenTranslator } from './translator.ts';
import { QWEN_USAGE_SHAPE } from './usage.ts';

export function qwenInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [manifest.binary, '--auth-type', 'openai', '-m', request.model, '-o', 'stream-json', '--yolo'];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  // 0.24: the positional prompt is the one-shot form (-p is deprecated).
  argv.push(request.prompt);
  const env: Record<string, string> = { ...manifest.env };
  if (request.baseUrl && manifest.auth.base_url_var) env[manifest.auth.base_url_var] = `${request.baseUrl.replace(/\/$/, '')}/v1`;
  return { argv, env, stdin: 'close', files: [] };
}

export default function qwenAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: QWEN_USAGE_SHAPE,
    invocation: (request) => qwenInvocation(manifest, request),
    createTranslator: (context) => new QwenTranslator(context),
  };
}
