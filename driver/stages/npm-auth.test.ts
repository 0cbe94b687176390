import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { npmAuthSecrets, npmrcWithAuth, withNpmAuth } from './npm-auth.ts';
import type { RunDirs } from '../run-dirs.ts';

const AUTH = Buffer.from('tcab-install:fake-npm-cache-password-0001').toString('base64');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const runTmp = () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tcab-npm-auth-'));
  dirs.push(tmp);
  return { tmp } as RunDirs;
};

describe('npmrcWithAuth', () => {
  it.each([
    ['http://tcab-tcab-npm-cache.evals.svc:4873/', '//tcab-tcab-npm-cache.evals.svc:4873/:_auth='],
    ['http://cache.example:4873', '//cache.example:4873/:_auth='],
    ['https://registry.example/npm/', '//registry.example/npm/:_auth='],
  ])('%s -> the credential for that registry only', (registry, prefix) => {
    expect(npmrcWithAuth(registry, AUTH)).toBe(`${prefix}${AUTH}\n`);
  });

  it('refuses a credential that would add lines to the config', () => {
    expect(() => npmrcWithAuth('http://c:4873/', `${AUTH}\nregistry=http://evil/`)).toThrow('one line');
  });
});

describe('withNpmAuth', () => {
  it('the file exists, mode 0400, only while npm runs, and npm is pointed at it', async () => {
    const d = runTmp();
    let seen: { env: Record<string, string>; content: string; mode: number } | undefined;
    await withNpmAuth({ dirs: d, user: {}, npmRegistry: 'http://cache:4873/', npmAuth: AUTH }, async (env) => {
      const file = env.npm_config_userconfig!;
      seen = { env, content: readFileSync(file, 'utf8'), mode: lstatSync(file).mode & 0o777 };
    });
    expect(seen!.env).toEqual({ npm_config_userconfig: join(d.tmp, '.tcab-install.npmrc') });
    expect(seen!.content).toBe(`//cache:4873/:_auth=${AUTH}\n`);
    expect(seen!.mode).toBe(0o400);
    expect(existsSync(join(d.tmp, '.tcab-install.npmrc'))).toBe(false);
  });

  it('removes it when npm fails too', async () => {
    const d = runTmp();
    await expect(withNpmAuth({ dirs: d, user: {}, npmRegistry: 'http://cache:4873/', npmAuth: AUTH }, async () => {
      throw new Error('npm failed');
    })).rejects.toThrow('npm failed');
    expect(existsSync(join(d.tmp, '.tcab-install.npmrc'))).toBe(false);
  });

  it('a link the run user planted at its name is replaced, never written through', async () => {
    const d = runTmp();
    const target = join(d.tmp, 'elsewhere');
    writeFileSync(target, 'untouched\n');
    symlinkSync(target, join(d.tmp, '.tcab-install.npmrc'));
    await withNpmAuth({ dirs: d, user: {}, npmRegistry: 'http://cache:4873/', npmAuth: AUTH }, async (env) => {
      expect(lstatSync(env.npm_config_userconfig!).isSymbolicLink()).toBe(false);
    });
    expect(readFileSync(target, 'utf8')).toBe('untouched\n');
  });

  it('no credential: no file, no variable', async () => {
    const d = runTmp();
    expect(await withNpmAuth({ dirs: d, user: {}, npmRegistry: 'http://cache:4873/' }, async (env) => env)).toEqual({});
  });
});

describe('npmAuthSecrets', () => {
  it('the credential and the password inside it', () => {
    expect(npmAuthSecrets(AUTH)).toEqual([AUTH, 'fake-npm-cache-password-0001']);
    expect(npmAuthSecrets(undefined)).toEqual([]);
  });
});
