import { describe, expect, it } from 'vitest';
import { newestCommonRelease } from './newest-version.ts';
import { installArgv } from './install.ts';
import { getHarness } from '../../harnesses/registry.ts';

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
