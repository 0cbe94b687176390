import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialError, credentialPresenceChecker, materializeCredentials, tokenLikeValues } from './credentials.ts';
import type { AvailableAuthResolution } from '../shared/auth.ts';

let base: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tcab-creds-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const subscription = (files: string[]): AvailableAuthResolution => ({ slug: 'codex', setting: 'auto', settingSource: 'default', available: true, mode: 'subscription', files });

describe('materializeCredentials', () => {
  it('pod path: files come from the mounted Secret keyed by basename and land at the CLI path, 0600, nothing in the workspace', async () => {
    const mounted = join(base, 'mounted');
    mkdirSync(mounted);
    writeFileSync(join(mounted, 'auth.json'), JSON.stringify({ tokens: { refresh_token: 'rt-fake-0123456789abcdef', id: 'short' } }));
    const home = join(base, 'run1/home');
    const workspace = join(base, 'run1/workspace');
    mkdirSync(home, { recursive: true });
    mkdirSync(workspace, { recursive: true });
    expect(credentialPresenceChecker({ kind: 'mounted', dir: mounted })('.codex/auth.json')).toBe(true);
    const result = await materializeCredentials(subscription(['.codex/auth.json']), { env: {}, source: { kind: 'mounted', dir: mounted }, runHome: home });
    expect(result.env).toEqual({});
    expect(result.files).toEqual([join(home, '.codex/auth.json')]);
    expect(statSync(join(home, '.codex/auth.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(home, '.codex/auth.json'), 'utf8')).tokens.refresh_token).toBe('rt-fake-0123456789abcdef');
    expect(result.secrets).toEqual(['rt-fake-0123456789abcdef']);
    expect(readdirSync(workspace)).toEqual([]);
  });

  it('api-key mode injects the key under the harness variable only', async () => {
    const resolution: AvailableAuthResolution = { slug: 'codex', setting: 'auto', settingSource: 'default', available: true, mode: 'api-key', keyVar: 'TCAB_API_KEY_CODEX', injectAs: 'CODEX_API_KEY', injectEnv: {} };
    const result = await materializeCredentials(resolution, { env: { TCAB_API_KEY_CODEX: 'sk-fake-own', OPENAI_API_KEY: 'sk-fake-shared' }, source: { kind: 'home', home: base }, runHome: join(base, 'h') });
    expect(result).toEqual({ env: { CODEX_API_KEY: 'sk-fake-own' }, secrets: ['sk-fake-own'], files: [] });
  });

  it('refuses paths that escape the run home and names a credential file that vanished', async () => {
    await expect(materializeCredentials(subscription(['../outside.json']), { env: {}, source: { kind: 'home', home: base }, runHome: join(base, 'h2') })).rejects.toThrow(/escapes the run home/);
    await expect(materializeCredentials(subscription(['.x/missing.json']), { env: {}, source: { kind: 'home', home: base }, runHome: join(base, 'h2') })).rejects.toThrow(CredentialError);
  });
});

describe('tokenLikeValues', () => {
  it('takes long, space-free strings from JSON (and a bare token file), not prose or short values', () => {
    expect(tokenLikeValues(JSON.stringify({ a: 'x'.repeat(20), b: 'short', c: ['y'.repeat(16)], d: 'a sentence that is long but has spaces' }))).toEqual(['x'.repeat(20), 'y'.repeat(16)]);
    expect(tokenLikeValues('  tok_0123456789abcdef\n')).toEqual(['tok_0123456789abcdef']);
  });
});
