// Writes every generated file (JSON Schema, CRDs, chart schema, docs/cli.md): scripts/generated-files.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_FILES } from './generated-files.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const file of GENERATED_FILES) {
  const target = join(root, file.path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, file.render());
  console.log(`wrote ${file.path}`);
}
