// The driver reads its settings through the driver env schema only (shared/driver-env.ts): no `env.TCAB_X`,
// `env['TCAB_X']` or `process.env` read of a setting elsewhere in driver/, so the schema is the whole contract.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DRIVER = import.meta.dirname;
/** Not the driver's settings: the NATS sink (its own schema, nats/settings.ts) and the stub model server program. */
const OTHERS = ['sinks/', 'stub-models/'];
/** Where process.env is handed to the schema (the entry point's default and the CA preload). */
const ENTRY_POINTS: Record<string, number> = { 'main.ts': 1, 'ca-bundle.ts': 1 };

const sources = readdirSync(DRIVER, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !OTHERS.some((o) => f.startsWith(o)));

describe('driver settings come from the schema only', () => {
  it('no module reads a TCAB_ variable by name (besides NATS, which has its own schema)', () => {
    const reads = sources.flatMap((file) => [...readFileSync(join(DRIVER, file), 'utf8').matchAll(/\benv(?:\.|\[\s*['"`])(TCAB_(?!NATS_)\w+)/g)].map((m) => `${file}: ${m[1]}`));
    expect(reads).toEqual([]);
  });

  it('process.env is read only where an entry point hands it to the schema', () => {
    const uses = Object.fromEntries(sources.map((file) => [file, [...readFileSync(join(DRIVER, file), 'utf8').matchAll(/process\.env\b/g)].length]).filter(([, n]) => n !== 0));
    expect(uses).toEqual(ENTRY_POINTS);
  });
});
