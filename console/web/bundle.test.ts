// The bundle builds in memory from the app's sources, serves one html shell that links both assets by content
// hash, and stays small: Preact, signals and the virtualiser only, never zod (the wire types are type imports).
import { describe, expect, it } from 'vitest';
import { buildConsoleBundle } from './bundle.ts';

describe('console bundle', () => {
  it('builds js, css and an html shell that references them by content hash', async () => {
    const bundle = await buildConsoleBundle();
    expect(bundle.html).toMatch(/<script type="module" src="\/console\/app\.js\?v=[0-9a-f]{12}"><\/script>/);
    expect(bundle.html).toMatch(/<link rel="stylesheet" href="\/console\/app\.css\?v=[0-9a-f]{12}">/);
    expect(bundle.html).toContain('<div id="app"></div>');
    expect(bundle.js).toContain('data-caught-up');
    expect(bundle.css).toContain(':focus-visible');
    // zod's error map text would be in the bundle if a value import from shared/ slipped in.
    expect(bundle.js).not.toMatch(/ZodError|invalid_type/);
    expect(Buffer.byteLength(bundle.js)).toBeLessThan(150_000);
  });
});

describe('console bundle builds', () => {
  it('concurrent and later builds all succeed (the esbuild service is stopped only when none is in flight)', async () => {
    const [a, b] = await Promise.all([buildConsoleBundle(), buildConsoleBundle()]);
    const c = await buildConsoleBundle();
    expect(a.js).toBe(b.js);
    expect(c.js).toBe(a.js);
  });
});
