// The harnesses the console lists: the registry's (catalogue + gg), with readiness computed by whoever knows the
// credentials (the dispatcher: its configured Secrets; `tcab console` cannot know them).
import { listHarnesses } from '../../harnesses/registry.ts';
import type { Readiness } from '../../shared/console.ts';
import { keyRoutesOf } from '../../shared/gateway-route.ts';
import type { HarnessCatalog } from './sources.ts';

export function registryCatalog(readiness: (slug: string) => Readiness): HarnessCatalog {
  const entries = listHarnesses().map((h) => ({ slug: h.manifest.slug, displayName: h.manifest.name, key: keyRoutesOf(h.manifest) }));
  return { list: () => entries, readiness };
}
