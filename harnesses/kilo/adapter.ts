// Kilo Code CLI adapter. Kilo is an OpenCode fork that keeps OpenCode's stream records, tool names and usage
// semantics (reference section 6), so it runs OpenCode's translator; only its binary, config path and extra
// tools (background_process, board_*, *_wakeup, kilo_local_recall: no event type, hence `unknown`) differ.
import type { HarnessAdapter } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { opencodeInvocation } from '../opencode/adapter.ts';
import { OpencodeTranslator } from '../opencode/translator.ts';
import { OPENCODE_USAGE_SHAPE } from '../opencode/usage.ts';

export default function kiloAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: OPENCODE_USAGE_SHAPE,
    invocation: (request) => opencodeInvocation(manifest, request, '.config/kilo/kilo.json'),
    createTranslator: (context) => new OpencodeTranslator(context),
  };
}
