// An npm registry on 127.0.0.1 for driver tests: real packuments and tarballs (made with tar) that a real npm
// installs, for packages the test writes; each request is recorded, a package can be republished, and one can be
// made to fail (503, or the connection reset) as a registry under trouble does.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ScriptedRegistry {
  url: string;
  /** Every request's path, in order. */
  requests: string[];
  /**
   * Publishes `name@version` (package.json written from the name, version, `bin` and `fields`, e.g.
   * optionalDependencies, which its packument version says too) as the latest.
   */
  publish(name: string, version: string, files: Record<string, string>, bin?: Record<string, string>, fields?: Record<string, unknown>): void;
  /**
   * Every request for `name` (packument and tarballs) answers 503, has its connection reset or hangs; `cut-tarball`:
   * its packument is served, its tarball answered 200 with its whole length and cut off after half of it (a registry
   * or cache going away mid-download); `up`: served again.
   */
  fail(name: string, fault: RegistryFault): void;
  close(): Promise<void>;
}

/** 'hang': the request is read and never answered (a registry stuck behind a proxy). */
export type RegistryFault = 'up' | '503' | 'reset' | 'hang' | 'cut-tarball';

function tarball(files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'tcab-pkg-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(dir, 'package', path, '..'), { recursive: true });
      writeFileSync(join(dir, 'package', path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
    }
    execFileSync('tar', ['-czf', join(dir, 'p.tgz'), '-C', dir, 'package']);
    return readFileSync(join(dir, 'p.tgz'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startScriptedRegistry(): Promise<ScriptedRegistry> {
  const packages = new Map<string, { versions: Map<string, { bytes: Buffer; manifest: Record<string, unknown> }>; latest: string }>();
  const requests: string[] = [];
  const faults = new Map<string, RegistryFault>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const name = decodeURIComponent(path.slice(1).split('/-/')[0]!);
    const fault = faults.get(name) ?? 'up';
    if (fault === '503') return void res.writeHead(503).end('down');
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'hang') return;
    const known = packages.get(name);
    if (!known) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    if (path.endsWith('.tgz')) {
      const version = /-([^-/]+)\.tgz$/.exec(path)?.[1];
      const found = version ? known.versions.get(version) : undefined;
      if (found && fault === 'cut-tarball') {
        res.writeHead(200, { 'content-length': found.bytes.length, 'content-type': 'application/octet-stream' });
        return void res.write(found.bytes.subarray(0, found.bytes.length >> 1), () => req.socket.destroy());
      }
      return void (found ? res.end(found.bytes) : res.writeHead(404).end());
    }
    const versions = Object.fromEntries([...known.versions].map(([v, { manifest }]) => [v, manifest]));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, 'dist-tags': { latest: known.latest }, versions }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requests,
    publish(name, version, files, bin, fields = {}) {
      const packageJson = JSON.stringify({ name, version, ...(bin ? { bin } : {}), ...fields });
      const bytes = tarball({ ...files, 'package.json': packageJson });
      const manifest = { name, version, ...(bin ? { bin } : {}), ...fields, dist: { tarball: `${url}${name}/-/${name}-${version}.tgz`, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` } };
      const known = packages.get(name) ?? { versions: new Map(), latest: version };
      known.versions.set(version, { bytes, manifest });
      known.latest = version;
      packages.set(name, known);
    },
    fail: (name, fault) => void faults.set(name, fault),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a hung request would hold close() open
      }),
  };
}
