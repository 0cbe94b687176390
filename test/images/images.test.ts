// The chart's five images, built the way `npm run images` builds them (buildah from deploy/images/Dockerfile.*, on
// the local Debian + Node base) and pushed to a throw-away registry on loopback (`crane registry serve`): what the
// registry serves has the entry points and users the chart relies on, the driver image holds what its entry point
// needs and no dev tooling, Node 24 runs inside as uid 1000, the machine's extra CA is trusted, and NATS and
// Verdaccio start from their images, and Squid (the egress proxy) runs under a read-only root. Needs root, buildah and mmdebstrap (.ci/run installs them); the first run on
// a machine builds everything (~3 min), later runs reuse the base and buildah's layer cache (~35 s, mostly the push).
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/log-lines.ts';
import { pollUntil } from '../support/poll.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BUILDAH = join(ROOT, 'scripts', 'images', 'buildah.sh');
const PREFIX = 'tcab-images-test-';

interface Result { code: number | null; stdout: string; stderr: string }
function run(cmd: string, args: string[], options: { timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((done, fail) => {
    // Its own process group, so a timeout stops what it started too (mmdebstrap, buildah).
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = options.timeoutMs ? setTimeout(() => process.kill(-child.pid!, 'SIGTERM'), options.timeoutMs) : undefined;
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
async function ok(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const result = await run(cmd, args, { timeoutMs });
  if (result.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${result.code}: ${result.stderr.slice(-3000)}`);
  return result.stdout;
}
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The driver image's entry point (deploy/images/Dockerfile.driver). */
const DRIVER_ENTRYPOINT = ['node', '--max-semi-space-size=16', '--import', '/opt/tcab/driver/compile-cache.mjs', '--import', '/opt/tcab/driver/ca-bundle.ts', '/opt/tcab/driver/main.ts'];

// PEM certificates of a file, and the set Debian ships on this machine (what base.sh does not call "extra").
const pems = (text: string) => text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
const norm = (pem: string) => pem.replace(/\s+/g, '');
function hostExtraCAs(): string[] {
  const file = process.env.TCAB_EXTRA_CA || process.env.NODE_EXTRA_CA_CERTS || process.env.SSL_CERT_FILE;
  if (!file) return [];
  const debian = new Set<string>();
  const dir = '/usr/share/ca-certificates';
  if (existsSync(dir)) {
    for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (f.endsWith('.crt')) for (const pem of pems(readFileSync(join(dir, f), 'utf8'))) debian.add(norm(pem));
    }
  }
  return pems(readFileSync(file, 'utf8')).filter((pem) => !debian.has(norm(pem)));
}

// Every repository file the driver's entry point loads: static imports from driver/main.ts, plus what
// harnesses/registry.ts loads at run time (each harness.toml and adapter.ts) and the bundled model catalogue.
function entryClosure(entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    const rel = relative(ROOT, file);
    if (files.has(rel)) return;
    files.add(rel);
    if (!file.endsWith('.ts')) return;
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/'));
    }
  };
  for (const entry of entries) visit(join(ROOT, entry));
  return { files, packages };
}
function treeFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile());
}

interface Summary { tag: string; base: string; seconds: number; images: Record<string, { ref: string; size: string; seconds: number }> }
interface ImageConfig { config: { Entrypoint?: string[]; Cmd?: string[]; User?: string; Env?: string[]; WorkingDir?: string; ExposedPorts?: Record<string, object> } }

let summary: Summary;
let registry: ReturnType<typeof spawn> | undefined;
let registryDir: string;
let pushed: string;
let crane: string;
const mounts = new Map<string, string>();

async function removeTestContainers(): Promise<void> {
  const names = (await ok(BUILDAH, ['containers', '--noheading', '--format', '{{.ContainerName}}'])).split('\n');
  for (const name of names.filter((n) => n.startsWith(PREFIX))) await ok(BUILDAH, ['rm', name]);
}
/** A working container of the image, mounted: its root directory on the host. */
async function mounted(name: string): Promise<string> {
  const existing = mounts.get(name);
  if (existing) return existing;
  await ok(BUILDAH, ['from', '--pull=never', '--name', PREFIX + name, summary.images[name]!.ref]);
  const dir = (await ok(BUILDAH, ['mount', PREFIX + name])).trim();
  mounts.set(name, dir);
  return dir;
}
/** Runs a command in the image (chroot isolation, the image's user and environment; the host's network). */
async function inImage(name: string, command: string[], timeoutMs = 60_000): Promise<string> {
  await mounted(name);
  return ok(BUILDAH, ['run', '--isolation', 'chroot', PREFIX + name, '--', ...command], timeoutMs);
}
const config = async (name: string): Promise<ImageConfig> => JSON.parse(await ok(crane, ['config', '--insecure', `${pushed}/${name}:${summary.tag}`]));

beforeAll(async () => {
  await removeTestContainers(); // a crashed earlier run's
  crane = (await ok(join(ROOT, 'scripts', 'images', 'ensure-crane.sh'), [], 600_000)).trim();
  registryDir = mkdtempSync(join(tmpdir(), 'tcab-images-registry-'));
  const port = await freePort();
  pushed = `127.0.0.1:${port}/tcab`;
  registry = spawn(crane, ['registry', 'serve', '--address', `127.0.0.1:${port}`, '--disk', registryDir], { stdio: 'ignore' });
  await pollUntil('the registry', async () => (await fetch(`http://127.0.0.1:${port}/v2/`)).ok, { timeoutMs: 30_000 });
  const built = await run(join(ROOT, 'scripts', 'images', 'build.sh'), ['--push', pushed], { timeoutMs: 900_000 });
  if (built.code !== 0) throw new Error(`npm run images failed (${built.code}): ${built.stderr.slice(-5000)}`);
  summary = JSON.parse(built.stdout.trim().split('\n').at(-1)!);
  console.log(`images built in ${summary.seconds}s: ${Object.entries(summary.images).map(([n, i]) => `${n} ${i.size} (${i.seconds}s)`).join(', ')}`);
}, 960_000);

afterAll(async () => {
  for (const name of mounts.keys()) await ok(BUILDAH, ['umount', PREFIX + name]).catch(() => undefined);
  await removeTestContainers().catch(() => undefined);
  registry?.kill('SIGTERM');
  if (registryDir) rmSync(registryDir, { recursive: true, force: true });
});

describe('npm run images', () => {
  it('pushes all five images under the names the chart defaults to', async () => {
    const catalog = JSON.parse(await ok(crane, ['catalog', '--insecure', pushed.split('/')[0]!]).then((s) => JSON.stringify(s.trim().split('\n'))));
    expect(catalog.sort()).toEqual(['tcab/dispatcher', 'tcab/driver', 'tcab/egress-proxy', 'tcab/nats', 'tcab/npm-cache']);
    const values = readFileSync(join(ROOT, 'charts', 'tcab', 'values.yaml'), 'utf8');
    for (const name of ['dispatcher', 'driver', 'nats', 'npm-cache', 'egress-proxy']) {
      expect(summary.images[name]!.ref).toBe(`ghcr.io/tcab/${name}:${summary.tag}`);
      expect(values).toContain(`repository: ghcr.io/tcab/${name}\n`);
    }
    expect(summary.tag).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('driver: the entry point, uid 1000, and only what the entry point needs', async () => {
    const { config: c } = await config('driver');
    expect(c.Entrypoint).toEqual(DRIVER_ENTRYPOINT);
    expect(c.User).toBe('1000:1000');
    expect(c.Env).toEqual(expect.arrayContaining(['HOME=/tmp/home', 'NODE_ENV=production', 'TCAB_RUN_ROOT=/tmp/tcab']));

    const root = await mounted('driver');
    const app = join(root, 'opt', 'tcab');
    const harnesses = readdirSync(join(ROOT, 'harnesses')).filter((h) => existsSync(join(ROOT, 'harnesses', h, 'harness.toml')));
    expect(harnesses.length).toBeGreaterThan(5);
    const { files, packages } = entryClosure(['driver/compile-cache.mjs', 'driver/main.ts', 'driver/ca-bundle.ts', 'driver/stub-models/serve.ts', ...harnesses.flatMap((h) => [`harnesses/${h}/adapter.ts`, `harnesses/${h}/harness.toml`]), 'shared/catalog/models.json']);
    const missing = [...files].filter((f) => !existsSync(join(app, f)));
    expect(missing).toEqual([]);
    for (const p of packages) expect(existsSync(join(app, 'node_modules', p, 'package.json')), p).toBe(true);
    // Nothing beyond the entry point's top-level folders, the production dependencies, the package files and the
    // compile cache made at build.
    const tops = new Set([...files].map((f) => f.split('/')[0]));
    expect(readdirSync(app).sort()).toEqual([...tops, '.compile-cache', 'node_modules', 'package-lock.json', 'package.json'].sort());
    expect(treeFiles(app).filter((f) => !f.startsWith('node_modules/') && /\.test\.ts$/.test(f))).toEqual([]);
    // No package the lockfile marks dev-only (vitest, typescript, eslint and what only they pull in).
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lock.packages).filter(([path, p]) => p.dev && path.startsWith('node_modules/')).map(([path]) => path);
    expect(devOnly).toEqual(expect.arrayContaining(['node_modules/vitest', 'node_modules/typescript', 'node_modules/eslint']));
    expect(devOnly.filter((path) => existsSync(join(app, path)))).toEqual([]);
    // The tools the driver runs besides Node: git (workspaces), ripgrep (OpenCode's tools), ps (procps), and what
    // Python CLIs install with (uv, Debian's python3); pip was only uv's installer.
    for (const tool of ['usr/bin/git', 'usr/bin/rg', 'usr/bin/ps', 'usr/local/bin/uv', 'usr/bin/python3']) expect(existsSync(join(root, tool)), tool).toBe(true);
    expect(existsSync(join(root, 'usr/bin/pip3')), 'pip3').toBe(false);
  });

  it('driver: its entry point loads every module it imports in the image, then asks for a Run spec', async () => {
    await mounted('driver');
    const started = await run(BUILDAH, ['run', '--isolation', 'chroot', PREFIX + 'driver', '--', ...DRIVER_ENTRYPOINT], { timeoutMs: 60_000 });
    expect(started.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find/);
    expect(started.stderr).toContain('TCAB_RUN_SPEC'); // the first thing it reads after its imports
    // Its own log line, as in a Pod: pino JSON on stderr (stdout is the event stream, empty here); buildah adds
    // its own plain line about the exit status, which is not the driver's.
    const [driverLines, buildahLines] = [true, false].map((json) => started.stderr.split('\n').filter((l) => l && l.startsWith('{') === json));
    expect(jsonLines(driverLines!.join('\n'))).toEqual([expect.objectContaining({ level: 'error', component: 'tcab-driver', variable: 'TCAB_RUN_SPEC', msg: 'TCAB_RUN_SPEC: set TCAB_RUN_SPEC (JSON) or TCAB_RUN_SPEC_FILE' })]);
    expect(buildahLines!.every((l) => /exit(ed)? (with )?status 2\b/.test(l)), buildahLines!.join('\n')).toBe(true);
    expect(started.stdout).toBe('');
    expect(started.code).not.toBe(0);
  });

  it('driver: starts from the compile cache made at build: none of its own modules is stripped or compiled again', async () => {
    await mounted('driver');
    // As root, as in a driver Pod (runAsUser 0): Node keys a compile cache by uid too, and the image's is root's (a
    // bare `docker run` as uid 1000 starts without it, as before).
    const started = await run(BUILDAH, ['run', '--isolation', 'chroot', '--user', '0:0', '--env', 'NODE_DEBUG_NATIVE=COMPILE_CACHE', PREFIX + 'driver', '--', ...DRIVER_ENTRYPOINT], { timeoutMs: 60_000 });
    const lines = started.stderr.split('\n').filter((l) => l.startsWith('[compile cache]'));
    // Enabled in a private copy on the scratch volume (the image's root is read-only in a Pod).
    expect(lines[0]).toMatch(/^\[compile cache\] resolved path \/tmp\/tcab-compile-cache-\w+ /);
    const accepted = (kind: string) => lines.filter((l) => new RegExp(`^\\[compile cache\\] reading cache from \\S+ for ${kind} file:///opt/tcab/\\S+\\.\\.\\.\\[[\\d ]+\\]\\.\\.\\. success`).test(l));
    expect(accepted('StrippedTypeScript').map((l) => /file:\/\/\/opt\/tcab\/(\S+?)\.\.\./.exec(l)![1])).toEqual(expect.arrayContaining(['driver/main.ts', 'driver/ca-bundle.ts', 'driver/run.ts', 'shared/driver-env.ts']));
    expect(accepted('ESM').length).toBeGreaterThan(50);
    // A module of the image the cache did not hold would say so here.
    expect(lines.filter((l) => /file:\/\/\/opt\/tcab\/.*(no transpile cache|was not initialized|mismatch|no such file)/.test(l))).toEqual([]);
    expect(started.stderr).toContain('TCAB_RUN_SPEC');
  });

  it('driver: Node 24 runs inside as uid 1000 and trusts the machine\'s extra CA', async () => {
    const script = `const tls = require('node:tls'); const { X509Certificate } = require('node:crypto');
      console.log(JSON.stringify({ version: process.version, uid: process.getuid(), gid: process.getgid(),
        ca: tls.getCACertificates('default').map((pem) => new X509Certificate(pem).fingerprint256) }))`;
    const out = JSON.parse((await inImage('driver', ['node', '-e', script])).trim()) as { version: string; uid: number; gid: number; ca: string[] };
    expect(out.version).toMatch(/^v24\./);
    expect(out).toMatchObject({ uid: 1000, gid: 1000 });
    expect(out.ca.length).toBeGreaterThan(100); // Node's own roots are still there

    const extras = hostExtraCAs();
    const root = await mounted('driver');
    const bundle = new Set(pems(readFileSync(join(root, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8')).map(norm));
    const added = readdirSync(join(root, 'usr', 'local', 'share', 'ca-certificates')).filter((f) => f.startsWith('tcab-extra-'));
    expect(added.length).toBe(extras.length);
    for (const pem of extras) {
      const cert = new X509Certificate(pem);
      expect(bundle.has(norm(pem)), `${cert.subject} in the system bundle (OpenSSL, git)`).toBe(true);
      expect(out.ca, `${cert.subject} trusted by Node`).toContain(cert.fingerprint256);
    }
  });

  it('dispatcher: the entry point and uid 1000, with the files it loads and no others', async () => {
    const { config: c } = await config('dispatcher');
    expect(c.Entrypoint).toEqual(['node', '/opt/tcab/dispatcher/main.ts']);
    expect(c.User).toBe('1000:1000');
    expect(c.ExposedPorts).toHaveProperty('8080/tcp');
    const app = join(await mounted('dispatcher'), 'opt', 'tcab');
    // The registry reads each harness.toml at run time (the slugs it serves); no adapter is loaded.
    const manifests = readdirSync(join(ROOT, 'harnesses')).filter((h) => existsSync(join(ROOT, 'harnesses', h, 'harness.toml'))).map((h) => `harnesses/${h}/harness.toml`);
    const { files } = entryClosure(['dispatcher/main.ts', ...manifests]);
    expect([...files].filter((f) => !existsSync(join(app, f)))).toEqual([]);
    // Not the driver's or the CLI's folders: the dispatcher runs neither (issue 21).
    const tops = new Set([...files].map((f) => f.split('/')[0]));
    expect(readdirSync(app).sort()).toEqual([...tops, 'node_modules', 'package-lock.json', 'package.json'].sort());
    expect((await inImage('dispatcher', ['node', '--version'])).trim()).toMatch(/^v24\./);
  });

  it('nats: nothing but nats-server, as uid 1000, taking the chart\'s config (-c) as args', async () => {
    const { config: c } = await config('nats');
    expect(c.Entrypoint).toEqual(['/nats-server']);
    expect(c.User).toBe('1000:1000');
    expect(treeFiles(await mounted('nats'))).toEqual(['nats-server']);
    const version = (await ok(join(ROOT, 'scripts', 'ensure-nats-server.sh'), [])).trim().match(/nats-server-(v[0-9.]+)/)![1];
    expect(await inImage('nats', ['/nats-server', '--version'])).toContain(version);
  });

  it('npm-cache: Verdaccio as uid 1000 with its config in /verdaccio/conf, answering /-/ping', async () => {
    const { config: c } = await config('npm-cache');
    expect(c.Entrypoint).toEqual(['verdaccio', '--config', '/verdaccio/conf/config.yaml', '--listen', '0.0.0.0:4873']);
    expect(c.User).toBe('1000:1000');
    expect(c.Env).toContain('VERDACCIO_HANDLE_KILL_SIGNALS=true'); // stops on SIGTERM as PID 1
    expect(c.ExposedPorts).toHaveProperty('4873/tcp');
    const root = await mounted('npm-cache');
    expect(readFileSync(join(root, 'verdaccio', 'conf', 'config.yaml'), 'utf8')).toContain('storage: /verdaccio/storage');
    expect(statSync(join(root, 'verdaccio', 'storage')).uid).toBe(1000);
    // Start it for real on a loopback port (chroot isolation shares the host's network), then stop it.
    const port = await freePort();
    const verdaccio = spawn(BUILDAH, ['run', '--isolation', 'chroot', PREFIX + 'npm-cache', '--', 'verdaccio', '--config', '/verdaccio/conf/config.yaml', '--listen', `127.0.0.1:${port}`], { stdio: 'ignore', detached: true });
    try {
      const pong = await pollUntil('verdaccio /-/ping', async () => {
        const res = await fetch(`http://127.0.0.1:${port}/-/ping`);
        return res.ok ? res.status : undefined;
      }, { timeoutMs: 60_000 });
      expect(pong).toBe(200);
    } finally {
      process.kill(-verdaccio.pid!, 'SIGTERM');
      await pollUntil('verdaccio to stop', () => verdaccio.exitCode !== null || verdaccio.signalCode !== null, { timeoutMs: 30_000 });
    }
  });
  it('egress-proxy: Debian\'s Squid from its entry point as uid 1000 under a read-only root, refusing every request with its own config and logging each as JSON on stdout', async () => {
    const { config: c } = await config('egress-proxy');
    expect(c.Entrypoint).toEqual(['/usr/local/bin/egress-proxy']);
    expect(c.Cmd).toEqual(['-f', '/etc/squid/squid.conf']); // the chart passes its own -f
    expect(c.User).toBe('1000:1000');
    expect(c.ExposedPorts).toHaveProperty('3128/tcp');
    const root = await mounted('egress-proxy');
    expect(existsSync(join(root, 'usr', 'sbin', 'squid'))).toBe(true);
    expect(statSync(join(root, 'run', 'squid')).uid).toBe(1000);
    // Debian's package leaves its ICMP helper setuid root; nothing setuid or setgid stays.
    expect((await ok('find', [root, '-xdev', '-type', 'f', '-perm', '/6000'])).trim()).toBe('');

    // As in the chart's Pod: the root read-only, only /run/squid writable (a tmpfs for the emptyDir), uid 1000, stdout
    // a socket (not openable by path: the entry point's FIFO carries the log). The image's config on a loopback port.
    const port = await freePort();
    writeFileSync(join(root, 'tmp', 'test.conf'), readFileSync(join(root, 'etc', 'squid', 'squid.conf'), 'utf8').replace(/^http_port 3128$/m, `http_port 127.0.0.1:${port}`));
    const view = mkdtempSync(join(tmpdir(), 'tcab-egress-root-'));
    const pod = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && mount -t tmpfs -o uid=1000,gid=1000,mode=0755 tmpfs "$2/run/squid" && mount --rbind /dev "$2/dev" && mount -t proc proc "$2/proc" && exec chroot --userspec=1000:1000 "$2" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/local/bin/egress-proxy -f /tmp/test.conf';
    // Its own mount namespace: the mounts go with it. exec all the way down, so the child's pid is Squid's.
    const squid = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', pod, 'sh', root, view], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    squid.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    squid.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const status = await pollUntil('squid to answer', () => new Promise<number | undefined>((resolve) => {
        request({ host: '127.0.0.1', port, path: 'http://blocked.test/', headers: { host: 'blocked.test' }, agent: false }, (res) => (res.resume(), resolve(res.statusCode)))
          .on('error', () => resolve(undefined)).end();
      }), { timeoutMs: 60_000 });
      expect(status, stderr.slice(-2000)).toBe(403);
      const line = await pollUntil('the access log line on stdout', () => stdout.split('\n').find((l) => l.includes('blocked.test')), { timeoutMs: 10_000 });
      expect(JSON.parse(line)).toMatchObject({ profile: '-', method: 'GET', url: 'http://blocked.test/', status: 403, result: 'TCP_DENIED', server: '-' });
      expect(readFileSync(`/proc/${squid.pid}/status`, 'utf8')).toMatch(/^Uid:\t1000\t1000\t1000\t1000$/m);
      expect(readFileSync(`/proc/${squid.pid}/comm`, 'utf8').trim()).toBe('squid');
    } finally {
      process.kill(-squid.pid!, 'SIGTERM');
      await pollUntil('squid to stop', () => squid.exitCode !== null || squid.signalCode !== null, { timeoutMs: 30_000 });
      rmSync(view, { recursive: true, force: true });
    }
    expect(stderr).not.toMatch(/FATAL|Read-only file system|Permission denied/);
  });
});
