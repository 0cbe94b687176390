import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILES } from './generated-files.ts';

const root = join(import.meta.dirname, '..');

describe('generated files', () => {
  it.each(GENERATED_FILES.map((f) => [f.path, f] as const))('%s matches its source (run `npm run generate`)', (_path, file) => {
    const committed = readFileSync(join(root, file.path), 'utf8');
    expect(committed).toBe(file.render());
  });
});
