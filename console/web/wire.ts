// The phase and outcome lists and the URLs the browser needs, written out here because the shared modules that own them
// build zod schemas at load time: importing a value from them would pull zod into the page's bundle.
// wire.test.ts asserts these equal the shared lists, so they cannot drift.
import type { Outcome } from '../../shared/run.ts';
import type { RunPhase } from '../../shared/run-status.ts';

export const PHASES = ['Pending', 'Dispatched', 'Starting', 'Running', 'Checking', 'Succeeded', 'Failed', 'Cancelled'] as const satisfies readonly RunPhase[];
export const FINAL: ReadonlySet<RunPhase> = new Set<RunPhase>(['Succeeded', 'Failed', 'Cancelled']);
export const OUTCOME_LIST = ['succeeded', 'harness_failed', 'infrastructure_failed', 'timed_out', 'cancelled', 'budget_exceeded'] as const satisfies readonly Outcome[];

/** The console's URLs (shared/console.ts CONSOLE_PATHS, plus the ATIF download of issue 24). */
const run = (namespace: string, name: string) => `/api/console/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
export const PATHS = {
  runsStream: '/api/console/runs/stream',
  runStream: (namespace: string, name: string) => `${run(namespace, name)}/stream`,
  cancel: (namespace: string, name: string) => `${run(namespace, name)}/cancel`,
  atif: (namespace: string, name: string) => `${run(namespace, name)}/atif`,
  harnessesStream: '/api/console/harnesses/stream',
  evaluationsStream: '/api/console/evaluations/stream',
  harnessConfig: (slug: string) => `/harness-config/${encodeURIComponent(slug)}`,
  session: '/api/console/session',
} as const;
