// Mistral Vibe adapter: `vibe --prompt=<prompt> --output streaming --auto-approve --trust --output-dir <dir>`, the
// model chosen by VIBE_ACTIVE_MODEL among the models of a config.toml the adapter writes into VIBE_HOME (inside the
// run HOME): one provider (the stub or Mistral's API, key from MISTRAL_API_KEY) and one model named as requested.
// Usage is not on stdout: Vibe writes it into <dir>/export.json on every exit, which the driver reads as a side
// file after the session (Invocation.sideFiles) and hands to the translator's finish as reports.export.
import type { HarnessAdapter, Invocation, InvocationRequest } from '../../shared/adapter.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { EXPORT_REPORT } from './export.ts';
import { VibeTranslator } from './translator.ts';
import { VIBE_USAGE_SHAPE } from './usage.ts';

/** Vibe's home below the run HOME (its default is ~/.vibe too; named so nothing depends on the default). */
export const VIBE_HOME_DIR = '.vibe';
/** Where Vibe writes export.json (and a copy of its journal), below the run HOME. */
export const OUTPUT_DIR = '.tcab-vibe';
/** Mistral's API, as Vibe's own built-in provider names it. */
export const MISTRAL_API_BASE = 'https://api.mistral.ai/v1';
/** The provider the config defines (not "mistral": that would merge into Vibe's built-in one). */
export const PROVIDER_NAME = 'tcab';
/** The key variable the provider reads (the manifest's inject_as). */
const KEY_VAR = 'MISTRAL_API_KEY';

/** A TOML basic string (JSON's escapes are TOML's for every character JSON.stringify emits). */
const tomlString = (value: string) => JSON.stringify(value);

/**
 * config.toml: quiet and offline switches, one provider, one model. Against the stub or a gateway the provider is
 * Vibe's "generic" OpenAI-compatible backend at <base>/v1; without one it is Mistral's API with Vibe's Mistral
 * backend, as Vibe's built-in provider has it. The model's alias is the requested id (VIBE_ACTIVE_MODEL picks it);
 * no prices are written (tcab prices usage itself), so Vibe's cost for this model is 0 (see usage.ts).
 */
export function vibeConfig(model: string, baseUrl: string | undefined): string {
  const apiBase = baseUrl ? `${baseUrl.replace(/\/$/, '')}/v1` : MISTRAL_API_BASE;
  return [
    '# Written by tcab for one run.',
    'enable_telemetry = false',
    'enable_update_checks = false',
    'enable_auto_update = false',
    'enable_notifications = false',
    'enable_connectors = false',
    '',
    '[experiments]',
    'enable = false',
    '',
    '[session_logging]',
    'generate_titles = false',
    '',
    '[[providers]]',
    `name = ${tomlString(PROVIDER_NAME)}`,
    `api_base = ${tomlString(apiBase)}`,
    `api_key_env_var = ${tomlString(KEY_VAR)}`,
    `backend = ${tomlString(baseUrl ? 'generic' : 'mistral')}`,
    '',
    '[[models]]',
    `name = ${tomlString(model)}`,
    `provider = ${tomlString(PROVIDER_NAME)}`,
    `alias = ${tomlString(model)}`,
    '',
  ].join('\n');
}

export function vibeInvocation(manifest: HarnessManifest, request: InvocationRequest): Invocation {
  const home = request.home.replace(/\/$/, '');
  // `--prompt=<text>`: the attached value is taken as is, so a prompt starting with `-` is no option.
  const argv = [manifest.binary, `--prompt=${request.prompt}`, '--output', 'streaming', '--auto-approve', '--trust', '--output-dir', `${home}/${OUTPUT_DIR}`];
  if (request.resumeSessionId) argv.push(`--resume=${request.resumeSessionId}`);
  return {
    argv,
    env: { ...manifest.env, VIBE_HOME: `${home}/${VIBE_HOME_DIR}`, VIBE_ACTIVE_MODEL: request.model },
    stdin: 'close',
    files: [{ path: `${VIBE_HOME_DIR}/config.toml`, content: vibeConfig(request.model, request.baseUrl) }],
    // Vibe rewrites export.json on every exit; a resumed session's export counts that session only.
    sideFiles: [{ name: EXPORT_REPORT, path: `${OUTPUT_DIR}/export.json`, read: 'document' }],
  };
}

export default function vibeAdapter(manifest: HarnessManifest): HarnessAdapter {
  return {
    slug: manifest.slug,
    usageShape: VIBE_USAGE_SHAPE,
    invocation: (request) => vibeInvocation(manifest, request),
    createTranslator: (context) => new VibeTranslator(context),
  };
}
