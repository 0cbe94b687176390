// The bundle builds in memory from the app's sources, serves one html shell that links both assets by content
// hash, and stays small: Preact, signals and the virtualiser only, never zod (the wire types are type imports). The
// evaluation page's plot library (Observable Plot with its d3 modules) is a chunk of its own, loaded on that page only.
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

  it('keeps the plot library out of app.js: one chunk, imported on demand, within its own budget', async () => {
    const bundle = await buildConsoleBundle();
    const names = Object.keys(bundle.chunks);
    expect(names).toEqual([expect.stringMatching(/^plot-chart-[A-Z0-9]+\.js$/)]);
    // Dynamically only: a static import would load it with every page.
    expect(bundle.js).toContain(`import("./chunks/${names[0]}")`);
    expect(bundle.js).not.toMatch(/from\s*"\.\/chunks\//);
    const chunk = bundle.chunks[names[0]!]!;
    expect(chunk).not.toMatch(/ZodError|invalid_type/);
    expect(Buffer.byteLength(chunk)).toBeLessThan(260_000);
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
