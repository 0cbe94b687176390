// Authentication mode resolution (spec: "Authentication", "Selecting a mode", "Availability"). One pure function
// used by every path (workstation CLI, driver Pod, dispatcher, `tcab harnesses status`), so the run path and the
// readiness listing always select identically. Inputs are passed in; nothing here reads env or files.
import type { AuthMode, HarnessManifest } from './manifest.ts';
import { AUTH_MODE_SETTINGS } from './run.ts';
import { InvalidInputError } from './errors.ts';

export { AUTH_MODE_SETTINGS };
export type AuthModeSetting = (typeof AUTH_MODE_SETTINGS)[number];
export type ManifestAuth = HarnessManifest['auth'];

export interface AuthInputs {
  env: Readonly<Record<string, string | undefined>>;
  /** Whether a credential file exists, from metadata only (existsSync, a mounted dir, Secret keys); never reads it. */
  credentialFilePresent: (homeRelativePath: string) => boolean;
  /** A Run's own authMode, the strongest setting. */
  specOverride?: AuthModeSetting;
}

interface Base {
  slug: string;
  /** The setting in force and where it came from. */
  setting: AuthModeSetting;
  settingSource: string;
}
export type AvailableAuthResolution =
  | (Base & { available: true; mode: 'api-key'; keyVar: string; injectAs: string; injectEnv: Record<string, string> })
  | (Base & { available: true; mode: 'subscription'; files: string[] });
export type AuthResolution = AvailableAuthResolution | (Base & { available: false; mode: AuthMode | null; reason: string });

const slugVar = (slug: string) => slug.toUpperCase().replace(/-/g, '_');
export const authModeVariable = (slug: string) => `TCAB_AUTH_MODE_${slugVar(slug)}`;
export const apiKeyOverrideVariable = (slug: string) => `TCAB_API_KEY_${slugVar(slug)}`;

const present = (value: string | undefined): value is string => value !== undefined && value !== '';

function parseSetting(name: string, value: string): AuthModeSetting {
  if ((AUTH_MODE_SETTINGS as readonly string[]).includes(value)) return value as AuthModeSetting;
  throw new InvalidInputError(name, `"${value}" is not an auth mode; use one of ${AUTH_MODE_SETTINGS.join(', ')}`);
}

/** The setting in force: spec override > TCAB_AUTH_MODE_<SLUG> > TCAB_AUTH_MODE > auto. */
export function authSetting(slug: string, inputs: AuthInputs): { setting: AuthModeSetting; source: string } {
  if (inputs.specOverride) return { setting: parseSetting('spec.authMode', inputs.specOverride), source: 'spec.authMode' };
  const perHarness = authModeVariable(slug);
  const perValue = inputs.env[perHarness];
  if (present(perValue)) return { setting: parseSetting(perHarness, perValue), source: perHarness };
  const shared = inputs.env.TCAB_AUTH_MODE;
  if (present(shared)) return { setting: parseSetting('TCAB_AUTH_MODE', shared), source: 'TCAB_AUTH_MODE' };
  return { setting: 'auto', source: 'default' };
}

/** The variables a key is read from, strongest first: the per-harness override, then the provider variables. */
export function apiKeySources(slug: string, auth: ManifestAuth): string[] {
  return auth.api_key ? [apiKeyOverrideVariable(slug), ...auth.api_key.host_vars] : [];
}

function findKey(slug: string, auth: ManifestAuth, env: AuthInputs['env']): string | undefined {
  return apiKeySources(slug, auth).find((name) => present(env[name]));
}

function missingFiles(auth: ManifestAuth, inputs: AuthInputs): string[] {
  return (auth.subscription?.files ?? []).filter((f) => !inputs.credentialFilePresent(f));
}

function keyHint(slug: string, auth: ManifestAuth): string {
  const vars = auth.api_key ? [...auth.api_key.host_vars, apiKeyOverrideVariable(slug)] : [];
  return vars.length <= 1 ? `set ${vars[0]}` : `set ${vars.slice(0, -1).join(', ')} or ${vars.at(-1)}`;
}

function signInHint(auth: ManifestAuth): string {
  const sub = auth.subscription!;
  return `${sub.sign_in} to create ${sub.files.map((f) => `~/${f}`).join(' and ')}`;
}

export function resolveAuth(auth: ManifestAuth, slug: string, inputs: AuthInputs): AuthResolution {
  const { setting, source } = authSetting(slug, inputs);
  const base = { slug, setting, settingSource: source };
  const supports = (mode: AuthMode) => auth.modes.includes(mode);

  const apiKey = (): AuthResolution => {
    const keyVar = findKey(slug, auth, inputs.env);
    if (!keyVar) return { ...base, available: false, mode: 'api-key', reason: keyHint(slug, auth) };
    return { ...base, available: true, mode: 'api-key', keyVar, injectAs: auth.api_key!.inject_as, injectEnv: { ...auth.api_key!.inject_env } };
  };
  const subscription = (): AuthResolution => {
    const missing = missingFiles(auth, inputs);
    if (missing.length > 0) return { ...base, available: false, mode: 'subscription', reason: signInHint(auth) };
    return { ...base, available: true, mode: 'subscription', files: [...auth.subscription!.files] };
  };
  const unsupported = (mode: AuthMode): AuthResolution => ({
    ...base,
    available: false,
    mode: null,
    reason: `${source} selects ${mode}, which ${slug} does not support (supported: ${auth.modes.join(', ')})`,
  });

  if (setting === 'api-key') return supports('api-key') ? apiKey() : unsupported('api-key');
  if (setting === 'subscription') return supports('subscription') ? subscription() : unsupported('subscription');

  // auto: prefer a subscription whose credentials are present, else an API key.
  if (supports('subscription') && missingFiles(auth, inputs).length === 0) return subscription();
  if (supports('api-key') && findKey(slug, auth, inputs.env)) return apiKey();
  const hints = [supports('api-key') ? keyHint(slug, auth) : undefined, supports('subscription') ? signInHint(auth) : undefined].filter(Boolean);
  return { ...base, available: false, mode: null, reason: hints.join(', or ') };
}
