// Layers point one way (issue 21): contracts sit below their users, so each image copies only the folders its entry
// point imports, and a folder can be read without the ones above it. shared/ is the floor; harnesses/ and nats/
// build on it; driver/ and dispatcher/ run harnesses and reach NATS only through nats/ and the cluster only through
// kube/; cli/ sits on them but never on dispatcher/; deploy/, scripts/, bench/ and test/ sit on top and may import
// anything. Test files are left out: a driver test may read the stream
// back with the CLI's reader, as a user would.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** The folders each layer may import from, besides itself (Node built-ins and packages are not layers). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  shared: [],
  harnesses: ['shared'],
  // The one NATS module (connection settings, envelope, stream, reader, result consumer): knows no harness.
  nats: ['shared'],
  // Pure converters of a run to other formats (ATIF, OpenTelemetry spans): driver, cli and console use them.
  export: ['shared'],
  // The driver hosts the model gateway in its own process (issue 34).
  driver: ['shared', 'harnesses', 'nats', 'export', 'gateway'],
  // The operator console's server (issue 23): rows and SSE over injected sources; the dispatcher mounts it.
  // The Kubernetes client code (issue 37): informers, stores, leader election, errors, the Run and HarnessConfig
  // resources; the dispatcher and the CLI both read the cluster through it.
  kube: ['shared'],
  // The console's API (console/api: HarnessConfigs over HTTP) reads and writes HarnessConfigs through kube/.
  console: ['shared', 'harnesses', 'nats', 'export', 'kube'],
  dispatcher: ['shared', 'harnesses', 'nats', 'console', 'gateway', 'kube'],
  // The CLI runs the driver locally and talks to a cluster's NATS, API and console: never through the dispatcher's
  // own code (a CLI user runs no dispatcher).
  cli: ['shared', 'harnesses', 'nats', 'export', 'driver', 'console', 'gateway', 'kube'],
  // The model gateway (issue 34): one module the driver hosts in-process and the chart as a Deployment.
  gateway: ['shared'],
};

/** Relative specifiers of every static, re-exported, side-effect and dynamic import in a module's source. */
export function relativeImports(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/\b(?:import|export)\s[^;]*?\sfrom\s*['"](\.[^'"]*)['"]/g),
    ...source.matchAll(/\bimport\s*['"](\.[^'"]*)['"]/g),
    ...source.matchAll(/\bimport\s*\(\s*['"](\.[^'"]*)['"]/g),
  ];
  return specifiers.map((m) => m[1]!);
}

/** The gateway's test support modules (stub bodies, helpers): held to the rule of its tests (below), not its layer's. */
const GATEWAY_TEST_SUPPORT = /^gateway\/(?:.*\/)?test-[^/]*\.ts$/;

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.split('/').includes('node_modules'))
    .map((f) => join(folder, f))
    .filter((f) => !GATEWAY_TEST_SUPPORT.test(f));
}

/** `file: specifier (-> folder)` for each import of a module of `folder` that leaves the folders it may import. */
function violations(folder: string): string[] {
  const allowed = new Set([folder, ...MAY_IMPORT[folder]!]);
  const out: string[] = [];
  for (const file of sources(folder)) {
    for (const specifier of relativeImports(readFileSync(join(ROOT, file), 'utf8'))) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), specifier)).split('/')[0]!;
      if (!allowed.has(target)) out.push(`${file}: ${specifier} (-> ${target}/)`);
    }
  }
  return out;
}

describe('layers', () => {
  it('the import scanner sees every form of import', () => {
    const source = [
      "import { a } from '../cli/a.ts';",
      "import type { B } from '../deploy/b.ts';",
      'import {\n  c,\n  d,\n} from "../cli/c.ts";',
      "export { e } from './e.ts';",
      "export * from '../x/f.ts';",
      "import '../side/effect.ts';",
      "const g = await import('../cli/g.ts');",
      "import { h } from 'node:fs';",
      "// from '../not/an/import.ts' in prose",
    ].join('\n');
    expect(relativeImports(source)).toEqual(['../cli/a.ts', '../deploy/b.ts', '../cli/c.ts', './e.ts', '../x/f.ts', '../side/effect.ts', '../cli/g.ts']);
  });

  it.each(Object.keys(MAY_IMPORT))('%s/ imports only from the layers below it', (folder) => {
    expect(sources(folder).length).toBeGreaterThan(0);
    expect(violations(folder)).toEqual([]);
  });

  it('gateway/ tests and their support modules reach into driver/ for the stub model server only (and the suite\'s own test/support)', () => {
    const tests = readdirSync(join(ROOT, 'gateway'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.test.ts') || GATEWAY_TEST_SUPPORT.test(`gateway/${f}`));
    expect(tests.length).toBeGreaterThan(0);
    const outside = tests.flatMap((f) =>
      relativeImports(readFileSync(join(ROOT, 'gateway', f), 'utf8'))
        .map((specifier) => relative(ROOT, resolve(ROOT, 'gateway', dirname(f), specifier)))
        .filter((target) => !target.startsWith('gateway/') && !target.startsWith('shared/') && !target.startsWith('driver/stub-models/') && !target.startsWith('test/support/'))
        .map((target) => `gateway/${f}: ${target}`),
    );
    expect(outside).toEqual([]);
  });

  it('only nats/ imports the NATS client (one module owns connections, subjects and headers)', () => {
    // bench/ measures raw nats.js next to the driver's pipeline, so it may use the client directly; tests too.
    const folders = ['shared', 'harnesses', 'nats', 'console', 'driver', 'dispatcher', 'gateway', 'cli', 'deploy', 'scripts'];
    const importers = folders.flatMap(sources).filter((file) => /\bfrom\s*['"]@nats-io\//.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((file) => !file.startsWith('nats/'))).toEqual([]);
  });
});
