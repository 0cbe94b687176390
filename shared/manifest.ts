// The declarative half of a harness: `harnesses/<slug>/harness.toml`, validated by this schema at load time.
// Everything other parts need to know about a harness without running it lives here (install, probe, auth
// capabilities, offline switches); the imperative half (invocation, translation, usage) is the adapter.
import { z } from 'zod';
import { PROVIDER_NAME } from './gateway.ts';
import { StubScript } from './stub-script.ts';

export const AUTH_MODES = ['subscription', 'api-key'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)');
const homeRelativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a path relative to the run user HOME');
const semverish = z.string().regex(/^\d+\.\d+\.\d+([-.+][0-9A-Za-z.+-]*)?$/, 'must be a version like 1.2.3');

export const ApiKeyAuth = z.strictObject({
  /** Conventional provider variables the user exports on the host, in order of preference. */
  host_vars: z.array(envName).min(1),
  /** The variable the harness CLI reads; the key is injected under this name only. */
  inject_as: envName,
  /** Extra variables set alongside the key (e.g. a blank competing variable), never secrets. */
  inject_env: z.record(envName, z.string()).default({}),
});

export const SubscriptionAuth = z.strictObject({
  /** Credential files the CLI writes on sign-in, relative to HOME; all must exist for the mode to be usable. */
  files: z.array(homeRelativePath).min(1),
  /** What a user does to create them, shown when the harness is unavailable. */
  sign_in: z.string().min(1),
  /**
   * Set when runs sharing one login must run one at a time, with the reason (issue 34): a login whose refresh token
   * is single-use and rotates on refresh, so two runs holding copies of it log each other out. The dispatcher then
   * claims at most one Run per subscription Secret (claims/decide.ts), and on a workstation `tcab run` holds a lock
   * beside the login's first file for the whole run and writes the rotated login back (driver/login-lock.ts).
   */
  serialize: z.string().min(10).describe('why runs sharing this login must run one at a time').optional(),
});

export const HarnessManifest = z.strictObject({
  slug: z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be a lowercase slug'),
  name: z.string().min(1),
  strategy: z.enum(['structured', 'best-effort']),
  binary: z.string().min(1),
  docs_url: z.url(),
  min_supported: semverish,
  latest_validated: semverish,
  /** Where the CLI comes from; every harness.toml has it. Absent exactly when `builtin` is set. */
  install: z.strictObject({
    /** npm package the CLI ships in; installs always take its newest published release. */
    npm_package: z.string().min(1).optional(),
    /** argv; `{prefix}` is the per-run install prefix, `{registry}` the configured npm registry. */
    command: z.array(z.string().min(1)).min(1),
    /** The binary's path below the prefix, when the package's bin wrapper is not usable (see reference notes). */
    bin_path: z.string().min(1).optional(),
    /**
     * The native package the CLI needs for this platform. When set, "newest release" means the newest version
     * published for both packages (registries lag on platform packages), which replaces `@latest` in command.
     */
    platform_package: z.string().min(1).optional(),
    /**
     * The versions that count as releases when picking the newest common one, a regular expression (default: x.y.z
     * only, no pre-releases). For a CLI that tags every release, e.g. Amp's `0.0.1790142911-g7618fb`.
     */
    release_pattern: z
      .string()
      .refine((p) => {
        try {
          new RegExp(p);
          return true;
        } catch {
          return false;
        }
      }, 'must be a regular expression')
      .optional(),
    /**
     * Hosts the install command downloads from besides the npm registry (an installer script, release assets, a
     * Python index): in a cluster a Run's default egress profile is the strictest that lets these through.
     */
    hosts: z.array(z.string().regex(/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, 'a host name, or .domain for a domain and its subdomains')).optional(),
  }).optional(),
  /**
   * A harness that ships with tcab as code (gg): nothing is installed, its entry module runs on the driver's own
   * Node (argv[0] of the version command and the invocation stands for it). Set by a descriptor, not a file.
   */
  builtin: z.strictObject({ entry: z.string().min(1) }).optional(),
  /** argv of the probe: must never start a session or anything that could cost money. */
  version_command: z.array(z.string().min(1)).min(1),
  /** First capture group = the version, searched in the probe's stdout. */
  version_pattern: z.string().default('(\\d+\\.\\d+\\.\\d+[0-9A-Za-z.+-]*)'),
  auth: z.strictObject({
    modes: z.array(z.enum(AUTH_MODES)).min(1),
    api_key: ApiKeyAuth.optional(),
    subscription: SubscriptionAuth.optional(),
    /** Variable that points the CLI at another model endpoint (how the stub and gateways are reached). */
    base_url_var: envName.optional(),
  }),
  /**
   * The model gateway (issue 34): for each variable its API key may come from, the gateway provider that key is for
   * (shared/gateway.ts PROVIDER_NAME: anthropic, openai, google, openrouter, dashscope): in api-key mode the harness
   * then gets the gateway's URL and a per-run token, never the key. Or why its key must stay in its environment
   * (a vendor backend that takes no base URL, a login the gateway cannot hold).
   */
  gateway: z
    .union([
      z.strictObject({ providers: z.record(envName, z.string().regex(PROVIDER_NAME, 'a gateway provider name')) }),
      z.strictObject({ key_in_harness: z.string().min(10).describe('why the key must stay in the harness environment') }),
    ])
    .optional(),
  /** How model ids are written for this harness; drives canonical-id resolution for pricing. */
  model_ids: z.enum(['anthropic', 'openai', 'google', 'qwen', 'openrouter', 'mixed', 'vendor']),
  /** The stub wire format used by verify and the offline demo; absent when the CLI cannot run offline. */
  stub_wire: z.enum(['anthropic-messages', 'openai-responses', 'openai-chat', 'gemini']).optional(),
  /** The offline demo's conversation, when the wire's default script names tools this harness does not have. */
  stub_script: StubScript.optional(),
  /** Static environment for every session: telemetry/update switches that keep a run offline and quiet. */
  env: z.record(envName, z.string()).default({}),
  /** Why the CLI cannot be driven offline here, when it cannot. */
  offline_note: z.string().optional(),
  /**
   * The CLI also speaks the Agent Client Protocol (JSON-RPC over stdio): the driver can be its ACP client instead of
   * reading its stdout stream (a Run's `protocol: acp`). The session's environment and config files are the stdout
   * invocation's; only the argv differs.
   */
  acp: z
    .strictObject({
      /** argv that starts the CLI as an ACP agent; `{model}` is the Run's model id. */
      command: z.array(z.string().min(1)).min(1),
      /** Whether Runs that name no protocol use ACP (`default = false`: the stdout mapping; the manifest says why). */
      default: z.boolean().default(false),
    })
    .optional(),
}).superRefine((m, ctx) => {
  if ((m.install === undefined) === (m.builtin === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['install'], message: 'required, unless the harness is built in (then it must be absent)' });
  }
  if (m.acp && m.acp.command[0] !== m.binary) {
    ctx.addIssue({ code: 'custom', path: ['acp', 'command'], message: `must start with the harness binary "${m.binary}" (the driver resolves it in the install prefix)` });
  }
  if (m.auth.modes.includes('api-key') && !m.auth.api_key) {
    ctx.addIssue({ code: 'custom', path: ['auth', 'api_key'], message: 'required when auth.modes has "api-key"' });
  }
  if (m.gateway && 'providers' in m.gateway) {
    for (const name of m.auth.api_key?.host_vars ?? []) {
      if (!Object.hasOwn(m.gateway.providers, name)) ctx.addIssue({ code: 'custom', path: ['gateway', 'providers'], message: `names no provider for ${name}, one of auth.api_key.host_vars` });
    }
  }
  if (m.auth.modes.includes('subscription') && !m.auth.subscription) {
    ctx.addIssue({ code: 'custom', path: ['auth', 'subscription'], message: 'required when auth.modes has "subscription"' });
  }
});
export type HarnessManifest = z.infer<typeof HarnessManifest>;
