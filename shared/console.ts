// The operator console's wire contract (issue 23): the rows the server keeps per Run and per harness, and the data of
// every Server-Sent Events message it writes. The server (console/server) builds these, the browser (console/web)
// reads them; one zod schema each, types inferred, no second copy.
//
// SSE framing: `event: <name>` is one of the *_MESSAGES keys below, `data:` its schema as JSON on one line. On the
// run stream the `event`/`events` messages also carry `id: <JetStream stream sequence>` (the last one of a batch),
// so a reconnecting browser (Last-Event-ID, or ?after=<n>) resumes right after it: no gap, no duplicate.
import { z } from 'zod';
import { HARNESS_EVENT_TYPES, HarnessEvent, SYSTEM_STAGES } from './events.ts';
import { OUTCOMES, RunResult, RunSpec } from './run.ts';
import { RUN_PHASES, RunStatus } from './run-status.ts';
import { TokenUsage } from './usage.ts';
import { EgressProfileName } from './egress.ts';
import { EvaluationCell, EvaluationComparison, EvaluationStatus } from './evaluation/schema.ts';

const time = z.string().describe('RFC 3339 time');

/** `${namespace}/${name}`: the key of a Run everywhere in the console (rows, remove messages, data-key). */
export const runKey = (namespace: string, name: string) => `${namespace}/${name}`;

export const Activity = z.strictObject({
  /** One short line: "command: npm test", "install_harness started", "thinking" (console/server/activity.ts). */
  text: z.string(),
  type: z.enum(HARNESS_EVENT_TYPES as [HarnessEvent['type'], ...HarnessEvent['type'][]]),
  stage: z.enum(SYSTEM_STAGES).optional(),
  /** The event's own timestamp. */
  at: time,
});
export type Activity = z.infer<typeof Activity>;

/** One line of the runs table: only what the table shows, so 100k Runs cost the server 100k small rows. */
export const RunRow = z.strictObject({
  key: z.string(),
  namespace: z.string(),
  name: z.string(),
  uid: z.string(),
  harness: z.string(),
  model: z.string(),
  /** status.phase, `Pending` while the Run has no status yet. */
  phase: z.enum(RUN_PHASES),
  outcome: z.enum(OUTCOMES).optional(),
  createdAt: time,
  startedAt: time.optional(),
  finishedAt: time.optional(),
  /** The latest event of the run (absent until the first one). */
  activity: Activity.optional(),
  /** When JetStream stored that latest event (the NATS server's clock): idle = serverNow - lastEventAt. */
  lastEventAt: time.optional(),
  tokens: TokenUsage.optional(),
  actualCostUsd: z.number().nonnegative().nullable().optional(),
  comparableCostUsd: z.number().nonnegative().nullable().optional(),
  harnessVersion: z.string().optional(),
  message: z.string().optional(),
  /** status.egress.profile: what the run's agent could reach outside the cluster (its hosts: the run page). */
  egress: EgressProfileName.optional(),
  /** The attempt the Run is on, once it is past its first (an infrastructure failure was retried: status.attempts). */
  attempt: z.int().min(2).optional(),
  /** status.check: the test case's check verdict (its output stays on the run page); absent when none ran. */
  check: RunStatus.shape.check,
  /** The tcab.dev/evaluation label (shared/evaluation/slots.ts): the Run is a slot of that Evaluation (same namespace). */
  evaluation: z.string().optional(),
  /** The tcab.dev/cell label: its cell's key (cellKey of harness and model). */
  cell: z.string().optional(),
  /** The tcab.dev/test-case label. */
  testCase: z.string().optional(),
});
export type RunRow = z.infer<typeof RunRow>;

export const Readiness = z.strictObject({
  ready: z.boolean(),
  /** The auth mode the harness would use now (api-key or subscription), when one is available. */
  mode: z.string().optional(),
  /** What is missing for it to run, in words (an env var, a subscription Secret). */
  missing: z.array(z.string()),
  /**
   * Set where readiness cannot be known (`tcab console` on a workstation: it depends on the dispatcher's Secrets):
   * why not, so a page says "unknown" instead of a false "not ready".
   */
  unknown: z.string().optional(),
});
export type Readiness = z.infer<typeof Readiness>;

/**
 * A provider+model the dispatcher holds Runs of because the model gateway reports it throttled (issue 34, adaptive
 * admission: dispatcher/claims/throttle.ts).
 */
export const ThrottleHoldRow = z.strictObject({
  provider: z.string(),
  /** null: every model of the provider (the throttled answers named none). */
  model: z.string().nullable(),
  /** When its Runs may start again, unless a new throttle extends the hold or good answers end it early. */
  heldUntil: time,
  /** Back-off level: the hold doubles with each level, up to its cap. */
  level: z.int().positive(),
  /** The last throttling status (429, 529). */
  status: z.int(),
  /** The provider's last retry-after (s); null when it gave none. */
  retryAfterS: z.number().nonnegative().nullable(),
  /** Throttled answers in the gateway's window. */
  count: z.int().nonnegative(),
});
export type ThrottleHoldRow = z.infer<typeof ThrottleHoldRow>;

export const HarnessRow = z.strictObject({
  slug: z.string(),
  displayName: z.string().optional(),
  /** The HarnessConfig's cap; null = unlimited, 0 = paused. */
  maxParallelism: z.int().min(0).nullable(),
  /** true while no HarnessConfig object exists for the slug (defaults apply). */
  default: z.boolean(),
  /** Runs of this harness holding a slot (Dispatched, Starting, Running, Checking). */
  occupied: z.int().nonnegative(),
  /** Runs of this harness still Pending. */
  queued: z.int().nonnegative(),
  readiness: Readiness,
  /** harnessVersion of the most recently started Run of this harness that reported one. */
  lastInstalledVersion: z.string().optional(),
  /**
   * Where its API key goes in api-key mode (shared/gateway-route.ts keyRoutesOf): the model gateway's providers (the
   * harness gets the gateway's URL and a per-run token), or why the key stays in its environment. Absent: no
   * API-key mode.
   */
  key: z.union([z.strictObject({ gateway: z.array(z.string()).min(1) }), z.strictObject({ keyInHarness: z.string() })]).optional(),
  /** Holds on the gateway providers its key goes to (provider back-pressure); absent: none. */
  holds: z.array(ThrottleHoldRow).optional(),
});
export type HarnessRow = z.infer<typeof HarnessRow>;

export const KubeEventRow = z.strictObject({
  type: z.string(),
  reason: z.string(),
  message: z.string(),
  count: z.int().nonnegative(),
  firstAt: time.optional(),
  lastAt: time.optional(),
  /** Who reported it (component), e.g. kubelet or tcab-dispatcher. */
  source: z.string().optional(),
});
export type KubeEventRow = z.infer<typeof KubeEventRow>;

/** `${namespace}/${name}` of an Evaluation, as runKey. */
export const evaluationKey = runKey;

/** One cell of an Evaluation's status, with the label its Runs carry (the runs page filters by it). */
export const EvaluationCellRow = EvaluationCell.extend({ key: z.string().describe('cellKey: the tcab.dev/cell label of its Runs') });
export type EvaluationCellRow = z.infer<typeof EvaluationCellRow>;

/** One Evaluation (issue 39) as the console shows it: its identity and its status, the spec's matrix counted only. */
export const EvaluationRow = z.strictObject({
  key: z.string(),
  namespace: z.string(),
  name: z.string(),
  /** The tcab.dev/evaluation label value of its Runs (the name, or a hash of a name longer than 63). */
  label: z.string(),
  createdAt: time,
  generation: z.int().optional(),
  observedGeneration: z.int().optional(),
  phase: EvaluationStatus.shape.phase,
  /** Why the spec is refused (Invalid), or what keeps a slot from its Run. */
  message: EvaluationStatus.shape.message,
  runs: EvaluationStatus.shape.runs,
  /** From the spec: cells (harness x model), test cases and repeats; the status' cells may still be missing. */
  matrix: z.strictObject({ cells: z.int().nonnegative(), testCases: z.int().nonnegative(), repeats: z.int().positive() }),
  cells: z.array(EvaluationCellRow),
  comparisons: z.array(EvaluationComparison),
});
export type EvaluationRow = z.infer<typeof EvaluationRow>;

/** A server-side problem the page should show (NATS unreachable, a watch failing); cleared by `notice` with no text. */
export const Notice = z.strictObject({ text: z.string().optional() });

// ---- GET /api/console/runs/stream
export const RUNS_MESSAGES = {
  snapshot: z.strictObject({ serverTime: time, stalledAfterSeconds: z.int().positive(), rows: z.array(RunRow) }),
  upsert: z.strictObject({ rows: z.array(RunRow) }),
  remove: z.strictObject({ keys: z.array(z.string()) }),
  notice: Notice,
};

// ---- GET /api/console/runs/:namespace/:name/stream?after=<n>
/** The Run's spec as stored (fields the schema does not know are kept, so an older console shows a newer Run). */
export const ShownSpec = z.looseObject(RunSpec.shape).partial();
export const FeedItem = z.strictObject({
  /** JetStream stream sequence: unique and increasing; the SSE id. */
  seq: z.int().positive(),
  /** The envelope's per-run Tcab-Seq header when present (0 / absent for the dispatcher's lifecycle events). */
  runSeq: z.int().nonnegative().optional(),
  /** When JetStream stored the message. */
  at: time,
  event: HarnessEvent,
  /** Set when the message broke the contract: it is shown as this `unknown` event, with the reason. */
  invalid: z.string().optional(),
});
export type FeedItem = z.infer<typeof FeedItem>;

export const RUN_MESSAGES = {
  run: z.strictObject({ row: RunRow, spec: ShownSpec, status: RunStatus.partial().optional(), stalledAfterSeconds: z.int().positive(), serverTime: time }),
  event: FeedItem,
  events: z.strictObject({ items: z.array(FeedItem) }),
  result: z.strictObject({ seq: z.int().positive(), result: RunResult }),
  'kube-events': z.strictObject({ items: z.array(KubeEventRow) }),
  'caught-up': z.strictObject({}),
  /** The Run was deleted. */
  gone: z.strictObject({}),
  notice: Notice,
};

// ---- GET /api/console/harnesses/stream
export const HARNESS_MESSAGES = {
  snapshot: z.strictObject({ serverTime: time, rows: z.array(HarnessRow) }),
  upsert: z.strictObject({ rows: z.array(HarnessRow) }),
  notice: Notice,
};

// ---- GET /api/console/evaluations/stream (the list page and each evaluation's page)
export const EVALUATIONS_MESSAGES = {
  /** available: false where the console reads no Evaluations (no source given): the page says so. */
  snapshot: z.strictObject({ serverTime: time, available: z.boolean(), rows: z.array(EvaluationRow) }),
  upsert: z.strictObject({ rows: z.array(EvaluationRow) }),
  remove: z.strictObject({ keys: z.array(z.string()) }),
};

export type RunsMessage = { [K in keyof typeof RUNS_MESSAGES]: { event: K; data: z.infer<(typeof RUNS_MESSAGES)[K]> } }[keyof typeof RUNS_MESSAGES];
export type RunMessage = { [K in keyof typeof RUN_MESSAGES]: { event: K; data: z.infer<(typeof RUN_MESSAGES)[K]> } }[keyof typeof RUN_MESSAGES];
export type HarnessMessage = { [K in keyof typeof HARNESS_MESSAGES]: { event: K; data: z.infer<(typeof HARNESS_MESSAGES)[K]> } }[keyof typeof HARNESS_MESSAGES];

// ---- reads need a read credential (shared/read-auth.ts); writes the write token, as POST /harness-config/:slug
/** POST /api/console/runs/:namespace/:name/cancel -> 200 with this; 401 without a valid token; 404 no such Run. */
export const CancelResponse = z.strictObject({ key: z.string(), cancel: z.literal(true) });

/** Paths, so server and browser name them once. */
export const CONSOLE_PATHS = {
  runsStream: '/api/console/runs/stream',
  runStream: (namespace: string, name: string) => `/api/console/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/stream`,
  cancel: (namespace: string, name: string) => `/api/console/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/cancel`,
  harnessesStream: '/api/console/harnesses/stream',
  evaluationsStream: '/api/console/evaluations/stream',
  harnessConfig: (slug: string) => `/harness-config/${encodeURIComponent(slug)}`,
  atif: (namespace: string, name: string) => `/api/console/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/atif`,
  /** GET: who this request is (shared/read-auth.ts SessionState); POST {token}: log in (the cookie); DELETE: log out. */
  session: '/api/console/session',
  appJs: '/console/app.js',
  appCss: '/console/app.css',
  /** Prefix of the app's code-split chunks (console/web/bundle.ts), each `<name>-<hash>.js`. */
  chunks: '/console/chunks/',
} as const;
