// Preloaded by the driver image's entry point (`node --import /opt/tcab/driver/ca-bundle.ts ...`): in a driver Pod
// with the chart's extraCA, writes the system CA bundle plus the extra certificates (NODE_EXTRA_CA_CERTS) to
// TCAB_CA_BUNDLE before the driver starts anything. The Pod's SSL_CERT_FILE, GIT_SSL_CAINFO, REQUESTS_CA_BUNDLE,
// CURL_CA_BUNDLE and PIP_CERT name that file: unlike NODE_EXTRA_CA_CERTS they replace the system bundle, so they
// need one merged file, and only the running container can make it (the image's bundle is not the chart's to
// read; the root filesystem is read-only, the file goes to the Pod's scratch volume). No-op without both.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseDriverEnvFields } from '../shared/driver-env.ts';
import type { DriverSettings } from '../shared/driver-env.ts';
import { createLogger } from '../shared/log.ts';
import type { LoggerOptions } from '../shared/log.ts';

export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export function writeCaBundle(settings: Pick<DriverSettings, 'TCAB_CA_BUNDLE' | 'NODE_EXTRA_CA_CERTS'>, systemBundle = SYSTEM_CA_BUNDLE): string | undefined {
  const target = settings.TCAB_CA_BUNDLE;
  const extra = settings.NODE_EXTRA_CA_CERTS;
  if (!target || !extra) return undefined;
  let system = '';
  try {
    system = readFileSync(systemBundle, 'utf8');
  } catch {
    // an image without Debian's bundle: the extra certificates alone are still what the operator asked to trust
  }
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  writeFileSync(target, `${system.trimEnd()}\n${readFileSync(extra, 'utf8').trim()}\n`.trimStart(), { mode: 0o644 });
  return target;
}

/** The preload's work: its variables decoded by the driver env schema, a failure one warning line (pino JSON). */
export function preloadCaBundle(env: Readonly<Record<string, string | undefined>>, systemBundle = SYSTEM_CA_BUNDLE, log: Pick<LoggerOptions, 'destination'> = {}): void {
  let settings;
  try {
    settings = parseDriverEnvFields(env, ['TCAB_CA_BUNDLE', 'NODE_EXTRA_CA_CERTS', 'TCAB_LOG_LEVEL', 'TCAB_RUN_ID']);
  } catch {
    return; // a bad value here is bad for the driver too: driver/main.ts stops naming it (exit 2)
  }
  try {
    writeCaBundle(settings, systemBundle);
  } catch (error) {
    // The driver still starts: Node reads NODE_EXTRA_CA_CERTS itself; a tool needing the bundle then fails naming it.
    const bindings: Record<string, string> = settings.TCAB_RUN_ID ? { runId: settings.TCAB_RUN_ID } : {};
    createLogger({ component: 'tcab-driver', level: settings.TCAB_LOG_LEVEL, bindings, ...log }).warn({ path: settings.TCAB_CA_BUNDLE }, `could not write the CA bundle ${settings.TCAB_CA_BUNDLE}: ${(error as Error).message}`);
  }
}

preloadCaBundle(process.env);
