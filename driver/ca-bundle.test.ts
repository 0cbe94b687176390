import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCaBundle } from './ca-bundle.ts';

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
