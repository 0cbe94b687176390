// Preloaded by the driver image's entry point (`node --import /opt/tcab/driver/ca-bundle.ts ...`): in a driver Pod
// with the chart's extraCA, writes the system CA bundle plus the extra certificates (NODE_EXTRA_CA_CERTS) to
// TCAB_CA_BUNDLE before the driver starts anything. The Pod's SSL_CERT_FILE, GIT_SSL_CAINFO, REQUESTS_CA_BUNDLE,
// CURL_CA_BUNDLE and PIP_CERT name that file: unlike NODE_EXTRA_CA_CERTS they replace the system bundle, so they
// need one merged file, and only the running container can make it (the image's bundle is not the chart's to
// read; the root filesystem is read-only, the file goes to the Pod's scratch volume). No-op without both.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export function writeCaBundle(env: Readonly<Record<string, string | undefined>>, systemBundle = SYSTEM_CA_BUNDLE): string | undefined {
  const target = env.TCAB_CA_BUNDLE;
  const extra = env.NODE_EXTRA_CA_CERTS;
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

try {
  writeCaBundle(process.env);
} catch (error) {
  // The driver still starts: Node reads NODE_EXTRA_CA_CERTS itself; a tool needing the bundle then fails naming it.
  process.stderr.write(`tcab-driver: warning: could not write the CA bundle ${process.env.TCAB_CA_BUNDLE}: ${(error as Error).message}\n`);
}
