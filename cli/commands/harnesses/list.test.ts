// `tcab harnesses list`: the protocols column says which harnesses the driver can also drive over ACP.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { harnessRows } from './list.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('tcab harnesses list', () => {
  it("lists each harness's protocols, its default first: ACP where the manifest has [acp]", async () => {
    const bySlug = new Map(harnessRows().map((r) => [r.slug, r]));
    expect(bySlug.get('gemini')!.protocols).toEqual(['stdout', 'acp']);
    expect(bySlug.get('opencode')!.protocols).toEqual(['stdout', 'acp']);
    expect(bySlug.get('claude')!.protocols).toEqual(['stdout']);
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'cli/main.ts'), 'harnesses', 'list'], { env: { ...process.env, NO_COLOR: '1' } });
    const [header, ...lines] = stdout.trim().split('\n');
    expect(header).toMatch(/OFFLINE\s+PROTOCOLS$/);
    expect(lines.find((l) => l.startsWith('gemini '))).toMatch(/yes\s+stdout, acp$/);
    expect(lines.find((l) => l.startsWith('grok '))).toMatch(/yes\s+stdout$/);
  });
});
