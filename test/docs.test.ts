// The README stays an entry point and docs/ holds one page per concern (issue 37): the README is short, links every
// docs page, and no relative link in the README or the docs points at a file or a heading that does not exist.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const DOCS = join(ROOT, 'docs');
const PAGES = readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort();
const FILES = ['README.md', ...PAGES.map((p) => `docs/${p}`)];

/** The markdown outside fenced code blocks (a `[x](y)` in a shell example is no link). */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .filter((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    })
    .join('\n');
}

/** Targets of inline links and images, without the ones to other sites or mail. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** GitHub's anchors for a page's headings (lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('docs', () => {
  it('README.md is at most 200 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });

  it('the README links every docs page', () => {
    const linked = new Set(relativeLinks(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((t) => t.split('#')[0]));
    expect(PAGES.filter((page) => !linked.has(`docs/${page}`))).toEqual([]);
  });

  it('each docs page starts with a one-line title and a sentence on what it covers', () => {
    for (const page of PAGES) {
      const [title, blank, sentence] = readFileSync(join(DOCS, page), 'utf8').split('\n');
      expect(title, page).toMatch(/^# \S/);
      expect(blank, page).toBe('');
      expect(sentence, page).toMatch(/\S/);
    }
  });

  it.each(FILES)('every relative link in %s resolves to an existing file and heading', (file) => {
    const broken: string[] = [];
    const source = readFileSync(join(ROOT, file), 'utf8');
    for (const target of relativeLinks(source)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURI(path));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no file ${relative(ROOT, resolved)}`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, resolved)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
