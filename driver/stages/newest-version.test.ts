import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newestCommonRelease, parsePublishedRelease } from './newest-version.ts';
import { installArgv, pinsVersion } from './install.ts';
import { listHarnesses } from '../../harnesses/registry.ts';
import { getHarness } from '../../harnesses/registry.ts';

/** `npm view <pkg> versions --json`, recorded from registry.npmjs.org on 2026-12-04. */
const recorded = (file: string) => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', file), 'utf8')) as string[];
const ampCli = recorded('npm-view-ampcode-cli-versions.json');
const ampLinux = recorded('npm-view-ampcode-cli-linux-x64-versions.json');

describe('newestCommonRelease', () => {
  it('picks the newest release both packages published, ignoring pre-releases and the wrapper-only newest', () => {
    expect(newestCommonRelease(['7.7.7', '7.8.0-beta.1', '7.8.1', '7.10.0'], ['7.7.7', '7.7.9', '7.8.0-beta.1', '7.9.0'])).toBe('7.7.7');
    expect(newestCommonRelease(['1.2.10', '1.2.9'], ['1.2.9', '1.2.10'])).toBe('1.2.10');
    expect(newestCommonRelease(['1.0.0'], ['2.0.0'])).toBeUndefined();
  });
  it('replaces only the package’s @latest in the install command', () => {
    const manifest = getHarness('claude').manifest;
    expect(installArgv(manifest, '/p', 'https://r/', '9.9.9').at(-1)).toBe('@anthropic-ai/claude-code@9.9.9');
    expect(installArgv(manifest, '/p', 'https://r/').at(-1)).toBe('@anthropic-ai/claude-code@latest');
  });
});

describe('issue 21: Amp, whose releases all carry their commit (-g<sha>) and whose native package lags', () => {
  const amp = getHarness('amp').manifest;

  it('the recorded registry: the newest @ampcode/cli has no linux-x64 package; the newest both have is chosen', () => {
    expect(ampCli.at(-1)).toBe('0.0.1790712063-gb89205');
    expect(ampLinux).not.toContain('0.0.1790712063-gb89205');
    expect(amp.install?.platform_package).toBe('@ampcode/cli-linux-x64');
    expect(newestCommonRelease(ampCli, ampLinux, amp.install?.release_pattern)).toBe('0.0.1790142911-g7618fb');
    // The default (x.y.z only) reads every Amp release as a pre-release: nothing would ever match.
    expect(newestCommonRelease(ampCli, ampLinux)).toBeUndefined();
    expect(installArgv(amp, '/p', 'https://r/', '0.0.1790142911-g7618fb').at(-1)).toBe('@ampcode/cli@0.0.1790142911-g7618fb');
  });

  it.each([
    // Ordered by the numeric core, not as text: a timestamp with more digits is newer.
    [['0.0.999999999-gaaaaaa', '0.0.1000000000-gbbbbbb'], ['0.0.999999999-gaaaaaa', '0.0.1000000000-gbbbbbb'], '0.0.1000000000-gbbbbbb'],
    // The newest common one, wherever it is in the list.
    [['0.0.1790142911-g7618fb', '0.0.1784106548-gd81d8b'], ['0.0.1784106548-gd81d8b', '0.0.1790142911-g7618fb'], '0.0.1790142911-g7618fb'],
    // Not a release by Amp's pattern: an untagged or otherwise tagged version, or a tag that is no commit.
    [['0.0.1790142911', '0.0.1790142912-beta.1', '0.0.1790142913-gXYZ'], ['0.0.1790142911', '0.0.1790142912-beta.1', '0.0.1790142913-gXYZ'], undefined],
    // The same version under another commit is another build: only an exact match counts.
    [['0.0.1790142911-g7618fb'], ['0.0.1790142911-g000000'], undefined],
  ])('%j with %j -> %s', (wrapper, platform, expected) => {
    expect(newestCommonRelease(wrapper, platform, amp.install?.release_pattern)).toBe(expected);
  });
});

describe('issue 36: what the release store keys an install by', () => {
  it.each([
    ['one version with an integrity', { version: '2.1.332', 'dist.integrity': 'sha512-tvSh6bLv+/AB==' }, { version: '2.1.332', integrity: 'sha512-tvSh6bLv+/AB==' }],
    ['several versions (a range)', [{ version: '1.0.0', 'dist.integrity': 'sha512-AA==' }], undefined],
    ['no integrity (an old registry entry)', { version: '1.0.0' }, undefined],
    ['an integrity that is not one', { version: '1.0.0', 'dist.integrity': 'md5-x; rm -rf /' }, undefined],
    ['a version that is not text', { version: 1, 'dist.integrity': 'sha512-AA==' }, undefined],
    ['Amp\'s release with its commit', { version: '0.0.1790142911-g7618fb', 'dist.integrity': 'sha512-AA==' }, { version: '0.0.1790142911-g7618fb', integrity: 'sha512-AA==' }],
    ['a version carrying a shell command', { version: '1.0.0; rm -rf /', 'dist.integrity': 'sha512-AA==' }, undefined],
    ['a version carrying a space and an option', { version: '1.0.0 --prefix=/etc', 'dist.integrity': 'sha512-AA==' }, undefined],
    ['a version that is a path', { version: '../../1.0.0', 'dist.integrity': 'sha512-AA==' }, undefined],
    ['a version of 10,000 characters', { version: `1.0.0-${'a'.repeat(10_000)}`, 'dist.integrity': 'sha512-AA==' }, undefined],
    ['nothing', null, undefined],
    ['a bare string', '1.0.0', undefined],
  ])('parsePublishedRelease: %s', (_, answer, want) => {
    expect(parsePublishedRelease(answer)).toEqual(want);
  });

  it('every npm harness here names <package>@latest or {version} in its install command, so the installed version is the one resolved', () => {
    const npm = listHarnesses().filter((h) => h.manifest.install?.npm_package);
    expect(npm.length).toBeGreaterThan(5);
    for (const h of npm) expect(pinsVersion(h.manifest, h.manifest.install!.npm_package!), h.manifest.slug).toBe(true);
    const claude = getHarness('claude').manifest;
    expect(pinsVersion({ ...claude, install: { ...claude.install!, command: ['sh', '-c', 'npm i -g @anthropic-ai/claude-code'] } }, '@anthropic-ai/claude-code')).toBe(false);
  });
});
