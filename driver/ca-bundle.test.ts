import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { preloadCaBundle, writeCaBundle } from './ca-bundle.ts';
import { capture } from '../test/support/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'tcab-ca-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pem = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`;

describe('writeCaBundle (the driver image preloads it)', () => {
  it('writes the system CAs, then the extra ones, to TCAB_CA_BUNDLE, making its directory', () => {
    writeFileSync(join(dir, 'system.crt'), pem('SYSTEM1') + pem('SYSTEM2'));
    writeFileSync(join(dir, 'extra.crt'), pem('PROXY'));
    const target = join(dir, 'scratch', '.tcab-ca', 'ca-certificates.crt');
    expect(writeCaBundle({ TCAB_CA_BUNDLE: target, NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt') }, join(dir, 'system.crt'))).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe(pem('SYSTEM1') + pem('SYSTEM2') + pem('PROXY'));
  });

  it('the extra CAs alone where the image has no system bundle; nothing without both variables', () => {
    const target = join(dir, 'alone.crt');
    writeCaBundle({ TCAB_CA_BUNDLE: target, NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt') }, join(dir, 'missing.crt'));
    expect(readFileSync(target, 'utf8')).toBe(pem('PROXY'));
    expect(writeCaBundle({ NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt') })).toBeUndefined();
    expect(writeCaBundle({ TCAB_CA_BUNDLE: join(dir, 'never.crt') })).toBeUndefined();
  });
});

describe('preloadCaBundle (the preload itself)', () => {
  it('writes the bundle from the environment as the driver env schema decodes it', () => {
    const target = join(dir, 'preload.crt');
    preloadCaBundle({ TCAB_CA_BUNDLE: target, NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt'), PATH: '/bin' }, join(dir, 'missing.crt'));
    expect(readFileSync(target, 'utf8')).toBe(pem('PROXY'));
  });

  it('a bundle it cannot write is one pino warning line naming the file, with the run id; the driver still starts', () => {
    writeFileSync(join(dir, 'a-file'), '');
    const target = join(dir, 'a-file', 'ca.crt'); // its directory is a file: mkdir fails
    const { lines, destination } = capture();
    preloadCaBundle({ TCAB_CA_BUNDLE: target, NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt'), TCAB_RUN_ID: 'ns_run-1' }, join(dir, 'missing.crt'), { destination });
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', component: 'tcab-driver', runId: 'ns_run-1', path: target, msg: expect.stringMatching(new RegExp(`^could not write the CA bundle ${target}: (EEXIST|ENOTDIR)`)) })]);
  });

  it('a value the schema refuses writes nothing and logs nothing here: the driver stops naming it', () => {
    const { lines, destination } = capture();
    preloadCaBundle({ TCAB_CA_BUNDLE: join(dir, 'never-written.crt'), NODE_EXTRA_CA_CERTS: join(dir, 'extra.crt'), TCAB_LOG_LEVEL: 'loud' }, join(dir, 'missing.crt'), { destination });
    expect(existsSync(join(dir, 'never-written.crt'))).toBe(false);
    expect(lines).toEqual([]);
  });
});
