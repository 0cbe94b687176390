// auggie adapter (best-effort): stdout lines are all surfaced as `unknown`; a hook reads the single final
// `{"type":"result",…}` object `--print --output-format json` prints for the session id, verdict, answer and the
// `--show-cost` billing. Shape from the bundle (augment.mjs 0.36.0): `billing{usage_unit: "credits"|"usd",
// total_cost, parent_cost, sub_agent_cost}`. Only a `usd` total is a USD cost; credits are kept in raw_usage.
import type { HarnessAdapter, Invocation, InvocationRequest, SessionTranslator } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import type { UsageShape } from '../../shared/usage.ts';
import { bestEffortTranslator } from '../../shared/translate/best-effort.ts';
import { bool, num, obj, str } from '../../shared/translate/json.ts';

export const AUGGIE_USAGE_SHAPE: UsageShape = {
  classes: [],
  doc:
    'No token counts are printed. result.billing (with --show-cost) -> raw usage; total_cost -> reported cost ' +
    'only when usage_unit is "usd" (a "credits" total is not a USD figure).',
};

export function auggieInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const argv = [
    manifest.binary,
    '--print', // one-shot; also skips the indexing confirmation
    '--output-format',
    'json',
    '--show-cost',
    '--model',
    request.model,
    '--workspace-root',
    request.workdir,
  ];
  if (request.resumeSessionId) argv.push('--resume', request.resumeSessionId);
  argv.push(request.prompt);
  return { argv, env: { ...manifest.env }, stdin: 'close', files: [] };
}

export function auggieTranslator(): SessionTranslator {
  return bestEffortTranslator({
    observe(line, result) {
      const record = obj(line.json);
      if (record?.type !== 'result') return;
      const sid = str(record.session_id);
      if (sid) result.session_id = sid;
      result.is_error = bool(record.is_error);
      result.final_text = str(record.result);
      const billing = obj(record.billing);
      if (!billing) return;
      result.raw_usage = billing;
      const total = num(billing.total_cost);
      result.reported_cost_usd = billing.usage_unit === 'usd' && total !== undefined ? total : null;
    },
  });
}

export default function auggieAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: AUGGIE_USAGE_SHAPE,
    invocation: (request) => auggieInvocation(manifest, request),
    createTranslator: () => auggieTranslator(),
  };
}
