// A run: what the user asks for (RunSpec, the same shape the Run custom resource carries as `spec`, hence
// Kubernetes-style camelCase) and what the driver reports when it is over (RunResult, published to NATS next to
// the events, hence snake_case like them). deploy/crds and deploy/schema are generated from these schemas.
import { z } from 'zod';
import { TokenUsage } from './usage.ts';
import { EgressProfileName } from './egress.ts';
import { RunBudget, WireAccount } from './gateway.ts';

/** The most attempts after the first a Run may ask for: each is a whole new run on a new Pod. */
export const MAX_RETRIES = 10;

export const AUTH_MODE_SETTINGS = ['auto', 'subscription', 'api-key'] as const;

/**
 * A string that reaches a command line, an environment variable or a file name (argv, env and paths are C strings:
 * a NUL would end them early, and Node refuses them mid-run). Rejected here, so the run spec is invalid and nothing
 * starts; the refinement keeps the generated JSON Schema and CRD unchanged.
 */
const cString = () => z.string().refine((v) => !v.includes('\0'), 'must not contain a NUL character (\\0): it cannot be passed to a process');

const relativeFilePath = cString()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a relative path inside the workspace');

export const WorkspaceFile = z
  .strictObject({
    path: relativeFilePath.describe('Path of the file, relative to the workspace; no `..` segments'),
    content: z.string().describe('The whole file content, as UTF-8 text'),
    mode: z.int().min(0).max(0o777).optional().describe('Permission bits as a number (e.g. 493 = 0755); default: 0644'),
  })
  .describe('One file written into the workspace');

export const TestCaseSource = z
  .union([
    z.strictObject({
      local: z
        .strictObject({ path: cString().min(1).describe('A directory on the machine running the driver') })
        .describe('Copy a directory of the machine running the driver (in a Pod: of the driver container) into the workspace'),
    }),
    z.strictObject({
      git: z
        .strictObject({
          url: cString().min(1).describe('Any URL or path `git clone` accepts'),
          ref: cString().min(1).optional().describe('Branch, tag or commit; default: the remote HEAD'),
        })
        .describe('Clone a git repository into the workspace'),
    }),
    z.strictObject({
      files: z.array(WorkspaceFile).min(1).max(1000).describe('Write these files (1 to 1,000) into an empty workspace'),
    }),
  ])
  .describe('Where the workspace comes from: exactly one of local, git or files');

/** Longest a check may run, and its default. */
export const MAX_CHECK_SECONDS = 24 * 3600;
export const DEFAULT_CHECK_SECONDS = 600;

/** A path inside a repository: relative, no `..` segment (checked again by the driver against the clone). */
const repoPath = () =>
  cString()
    .min(1)
    .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a path inside the repository: relative, without ".."');

export const CheckFilesFrom = z
  .strictObject({
    git: z
      .strictObject({
        url: cString().min(1).refine((u) => !u.startsWith('-'), 'must not start with "-"').describe('Any URL or path `git clone` accepts'),
        ref: cString().min(1).refine((r) => !r.startsWith('-'), 'must not start with "-"').optional().describe('Branch, tag or commit; default: the remote HEAD'),
        path: repoPath().optional().describe("A directory in the repository (default: its root, without .git): its files go into the workspace at their paths relative to it"),
      })
      .describe("Clone a repository and take the check's files from it"),
  })
  .describe("Where more of the check's files come from: fetched by the driver before the agent starts, kept where the agent cannot read them, written into the workspace only for the check");

export const TestCaseCheck = z
  .strictObject({
    command: cString().min(1).describe('Shell command run in the workspace as the run user after the last session; exit 0 = passed. It may write a reward (a number in [0, 1]) to the file named by $TCAB_REWARD_FILE'),
    files: z
      .array(WorkspaceFile)
      .max(1000)
      .optional()
      .describe('Files written into the workspace just before the command runs (after every process of the agent is gone), replacing whatever the agent left at those paths'),
    filesFrom: CheckFilesFrom.optional(),
    timeoutSeconds: z.int().min(1).max(MAX_CHECK_SECONDS).default(DEFAULT_CHECK_SECONDS).describe('Wall-clock limit of the check in seconds (not counted in maxRuntimeSeconds); a check past it failed'),
  })
  .describe("How the run's work is judged: a command and the files it needs, shipped in only after the agent is gone, so the agent cannot change the verdict");
export type TestCaseCheck = z.infer<typeof TestCaseCheck>;
export type CheckFilesFrom = z.infer<typeof CheckFilesFrom>;

export const TestCase = z
  .strictObject({
    source: TestCaseSource.optional(),
    init: cString().min(1).optional().describe('Shell command run in the workspace as the run user before the session'),
    check: TestCaseCheck.optional(),
  })
  .describe('The workspace the harness works in; default: an empty directory');
export type TestCase = z.infer<typeof TestCase>;

export const RunSpec = z.strictObject({
  harness: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/, 'must be a harness slug such as "claude"')
    .describe('Slug of the harness to run, e.g. claude, codex, gemini (`tcab harnesses list` shows them)'),
  model: cString().min(1).max(256).describe('Opaque model id, passed to the harness unchanged'),
  prompt: cString().min(1).max(1_000_000).describe('The task given to the harness as its first prompt'),
  testCase: TestCase.optional(),
  maxRuntimeSeconds: z.int().min(1).max(7 * 24 * 3600).default(3600).describe('Wall-clock limit of the whole run in seconds; the run ends timed_out when it passes'),
  authMode: z.enum(AUTH_MODE_SETTINGS).optional().describe('Overrides TCAB_AUTH_MODE for this run'),
  sessions: z.int().min(1).max(50).default(1).describe('Harness sessions to drive; later ones resume the first'),
  continuePrompt: cString().min(1).default('Continue.').describe('Prompt of every session after the first'),
  cancel: z.boolean().optional().describe('Set true to stop the run (cluster path)'),
  budget: RunBudget.optional(),
  protocol: z
    .enum(['stdout', 'acp'])
    .optional()
    .describe("How the driver talks to the harness: `stdout` (its own headless stream) or `acp` (the Agent Client Protocol, for harnesses whose manifest has an [acp] section); default: the manifest's choice"),
  egress: EgressProfileName.optional().describe("Egress profile (cluster path): what the agent may reach outside the cluster, one of the install's profiles (e.g. none, registries, open); default: the install's default profile"),
  retries: z
    .int()
    .min(0)
    .max(MAX_RETRIES)
    .default(2)
    .describe(
      'Attempts after the first when an attempt fails on infrastructure (cluster path): its node lost, its Pod evicted, preempted or deleted, its image not pulled, the harness install failing on a registry or network error. Never after an agent or harness failure, a timeout, a budget or a cancel. 0: one attempt only',
    ),
}).describe('What to run: the harness, model and prompt, the workspace, and the limits');
export type RunSpec = z.infer<typeof RunSpec>;

/**
 * The longest a run can take: its maximum runtime plus its check's timeout (the check runs after the sessions). What
 * outlives a run is sized by this: the driver Pod's deadline, its NATS credential, its install prefix.
 */
export function runLifetimeSeconds(spec: Pick<RunSpec, 'maxRuntimeSeconds' | 'testCase'>): number {
  return spec.maxRuntimeSeconds + (spec.testCase?.check?.timeoutSeconds ?? 0);
}
export type RunSpecInput = z.input<typeof RunSpec>;

export const OUTCOMES = ['succeeded', 'harness_failed', 'infrastructure_failed', 'timed_out', 'cancelled', 'budget_exceeded'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const RunAttemptNumber = z
  .strictObject({
    number: z.int().min(1).max(MAX_RETRIES + 1).describe('1 for the first attempt'),
    of: z.int().min(1).max(MAX_RETRIES + 1).describe('How many attempts the Run may make (1 + spec.retries)'),
  })
  .refine((a) => a.number <= a.of, 'number: must not exceed of');
export type RunAttemptNumber = z.infer<typeof RunAttemptNumber>;

export const SessionRecord = z.strictObject({
  index: z.int().nonnegative(),
  session_id: z.string().nullable(),
  exit_code: z.int().nullable(),
  signal: z.string().nullable(),
  tokens: TokenUsage.nullable(),
  reported_cost_usd: z.number().nonnegative().nullable(),
  is_error: z.boolean().nullable(),
  duration_ms: z.int().nonnegative(),
  counts: z.record(z.string(), z.int().nonnegative()),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

export const StageTiming = z.strictObject({
  stage: z.string(),
  status: z.enum(['completed', 'failed']),
  duration_ms: z.int().nonnegative(),
});

/** The verdict of a test case's check (TestCaseCheck). */
export const CheckResult = z.strictObject({
  passed: z.boolean().describe('The command exited 0 within its timeout'),
  exit_code: z.int().nullable().describe('null when it was killed (its timeout) or could not start'),
  reward: z.number().min(0).max(1).nullable().describe('What the check wrote to $TCAB_REWARD_FILE; null when it wrote nothing valid (never derived from passed)'),
  duration_ms: z.int().nonnegative(),
  output_tail: z.string().describe('The last lines of its stdout and stderr, scrubbed like every output'),
});
export type CheckResult = z.infer<typeof CheckResult>;

export const RunResult = z.strictObject({
  run_id: z.string().min(1),
  harness_slug: z.string(),
  harness_version: z.string().nullable(),
  model: z.string(),
  canonical_model: z.string().nullable(),
  outcome: z.enum(OUTCOMES),
  message: z.string(),
  auth_mode: z.enum(['api-key', 'subscription']).nullable(),
  sessions: z.array(SessionRecord),
  session_ids: z.array(z.string()),
  exit_code: z.int().nullable().describe('Exit status of the last session, null when none ran or it was killed'),
  stages: z.array(StageTiming),
  tokens: TokenUsage.nullable(),
  raw_usage: z.json().nullable(),
  // Optional: results published before the gateway existed have none, and must still read.
  wire: WireAccount.nullable().optional().describe('What the model gateway measured on the wire; null or absent when the run did not go through one'),
  reported_cost_usd: z.number().nonnegative().nullable(),
  actual_cost_usd: z.number().nonnegative().nullable(),
  comparable_cost_usd: z.number().nonnegative().nullable(),
  catalog_version: z.string().nullable(),
  cost_warnings: z.array(z.string()),
  started_at: z.iso.datetime({ offset: true }),
  finished_at: z.iso.datetime({ offset: true }),
  event_count: z.int().nonnegative(),
  // Optional: workstation runs are one attempt, and results published before attempts existed must still read.
  attempt: RunAttemptNumber.optional().describe("Which attempt of a cluster Run this result is of (dispatcher's TCAB_RUN_ATTEMPT_NUMBER / TCAB_RUN_ATTEMPTS)"),
  // Optional: only a run whose test case has a check has one; null when the check did not run (the run failed
  // before its sessions, was cancelled or hit its budget).
  check: CheckResult.nullable().optional().describe("The verdict of the test case's check; null when it did not run; absent when the test case has none"),
  retryable: z
    .boolean()
    .optional()
    .describe('Set on an infrastructure failure the driver found transient (a registry or network error installing the harness, before any session): the dispatcher tries the Run again while it has attempts left'),
});
export type RunResult = z.infer<typeof RunResult>;

/**
 * Whether another attempt of the Run may follow this result: an infrastructure failure the driver found transient,
 * with attempts left. Readers (`tcab events follow`, exports) read on past it; the dispatcher decides (a cancel in
 * the meantime ends the Run instead), and a Run whose last attempt ends so says why in its status.
 */
export function anotherAttemptMayFollow(result: RunResult): boolean {
  return result.outcome === 'infrastructure_failed' && result.retryable === true && result.sessions.length === 0 && result.attempt !== undefined && result.attempt.number < result.attempt.of;
}
