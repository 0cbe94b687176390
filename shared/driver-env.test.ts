// The driver env schema, variable by variable: what each accepts (and decodes to), what it refuses (naming the
// variable), its default; and that typed values encode to text that decodes back to the same values.
import { describe, expect, it } from 'vitest';
import { BaseUrls, CREDENTIALS_MOUNT, DEFAULT_NPM_REGISTRY, DEFAULT_RUN_ROOT, DriverEnvFields, baseUrlFor, encodeDriverEnv, parseDriverEnv, parseRunSettings, parseRunSpecText, releaseStoreOf } from './driver-env.ts';
import { InvalidInputError } from './errors.ts';
import { RunSpec } from './run.ts';

const SPEC = { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'fix it' };
const withSpec = { TCAB_RUN_SPEC: JSON.stringify(SPEC) };
const NUL = 'a\u0000b';

/** variable, valid [text, decoded], invalid [text, message after `VAR: `], decoded value when unset. */
const TABLE: [string, [string, unknown][], [string, string | RegExp][], unknown][] = [
  ['TCAB_RUN_ID', [['evals_fix-bug-17', 'evals_fix-bug-17'], ['a'.repeat(200), 'a'.repeat(200)]], [['', /^"" is not a run id: a run id is 1-200 characters/], ['a/b', /is not a run id/], ['..', /is not a run id/], ['_x', /is not a run id/], ['a'.repeat(201), /is not a run id/], ['x\ny', /^"x\\ny" is not a run id/]], undefined],
  ['TCAB_RUN_ATTEMPT', [['0f1e2d3c-aaaa-bbbb-cccc-1234567890ab', '0f1e2d3c-aaaa-bbbb-cccc-1234567890ab']], [['uid\r\nNats-Msg-Id: forged', /^"uid\\r\\nNats-Msg-Id: forged" is not a run attempt: an attempt is 1-200 characters/], ['a b', /is not a run attempt/]], undefined],
  ['TCAB_RUN_ATTEMPT_NUMBER', [['1', 1], ['3', 3]], [['0', 'must be a whole number from 1, got "0"'], ['two', /got "two"/], ['-1', /got "-1"/]], undefined],
  ['TCAB_RUN_ATTEMPTS', [['1', 1], ['11', 11]], [['0', 'must be a whole number from 1, got "0"'], ['1.5', /got "1.5"/]], undefined],
  ['TCAB_RUN_SPEC', [[JSON.stringify(SPEC), RunSpec.parse(SPEC)]], [['{not json', /^not valid JSON: /]], undefined],
  ['TCAB_CREDENTIALS_DIR', [['/mnt/creds', '/mnt/creds']], [[NUL, 'must not contain a NUL character (\\0)']], CREDENTIALS_MOUNT],
  ['TCAB_RUN_ROOT', [['/tmp/tcab', '/tmp/tcab'], ['runs', 'runs']], [[NUL, 'must not contain a NUL character (\\0)']], DEFAULT_RUN_ROOT],
  ['TCAB_AWAIT_POD_START_SECONDS', [['15', 15], ['0', 0]], [['-1', 'must be a whole number of seconds, got "-1"'], ['1e3', 'must be a whole number of seconds, got "1e3"'], [' 15', /got " 15"/], ['fifteen', /got "fifteen"/]], 0],
  ['TCAB_CA_BUNDLE', [['/tmp/.tcab-ca/ca-certificates.crt', '/tmp/.tcab-ca/ca-certificates.crt']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['NODE_EXTRA_CA_CERTS', [['/etc/tcab/extra-ca/ca.crt', '/etc/tcab/extra-ca/ca.crt']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['TCAB_RESULT_FILE', [['/tmp/result.json', '/tmp/result.json']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['TCAB_NPM_REGISTRY', [['http://verdaccio.tcab:4873/', 'http://verdaccio.tcab:4873/']], [['ftp://mirror/', 'must be an http(s) URL, got "ftp://mirror/"'], ['verdaccio:4873', /must be an http\(s\) URL/]], DEFAULT_NPM_REGISTRY],
  ['TCAB_NPM_CACHE', [['/tmp/npm', '/tmp/npm']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['TCAB_RELEASE_STORE', [['/var/cache/tcab/releases', '/var/cache/tcab/releases'], ['off', 'off']], [[NUL, /must not contain a NUL character/]], undefined],
  ['TCAB_PREFIX_ROOT', [['/var/cache/tcab/prefixes', '/var/cache/tcab/prefixes']], [[NUL, /must not contain a NUL character/]], undefined],
  ['TCAB_NPM_AUTH_FILE', [['/var/run/tcab/npm/auth', '/var/run/tcab/npm/auth']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['TCAB_BASE_URL', [['https://gateway.example/v1', 'https://gateway.example/v1'], ['https://u:sk-fake-gw@gateway.example/', 'https://u:sk-fake-gw@gateway.example/']], [['gateway', 'must be an http(s) URL, got "gateway"'], ['u:sk-fake-gw@gateway', 'must be an http(s) URL, got a value with "@" (not shown: it may carry credentials)']], undefined],
  ['TCAB_MODEL_CATALOG', [['/etc/catalog.json', '/etc/catalog.json']], [[NUL, 'must not contain a NUL character (\\0)']], undefined],
  ['TCAB_RUN_UID', [['1000', 1000], ['65534', 65534]], [['abc', 'must be a positive integer uid/gid (not root), got "abc"'], ['0', /not root\), got "0"/], ['-5', /got "-5"/], ['1.5', /got "1.5"/]], undefined],
  ['TCAB_RUN_GID', [['1001', 1001]], [['root', 'must be a positive integer uid/gid (not root), got "root"']], undefined],
  ['TCAB_LOG_LEVEL', [['debug', 'debug'], ['silent', 'silent']], [['verbose', 'must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'], ['INFO', /got "INFO"/]], 'info'],  ['TCAB_OTEL', [['1', '1'], ['false', 'false']], [['yes', 'must be 1, true, 0 or false, got "yes"']], undefined],
];

describe('the driver env schema', () => {
  it('covers every field, and every field says what it is (.describe)', () => {
    const fields = Object.keys(DriverEnvFields.shape);
    expect(new Set(TABLE.map(([name]) => name))).toEqual(new Set(fields.filter((f) => f !== 'TCAB_RUN_SPEC_FILE')));
    for (const [name, field] of Object.entries(DriverEnvFields.shape)) expect(field.description, name).toMatch(/\w{3}/);
    expect(BaseUrls.description).toMatch(/TCAB_BASE_URL_<SLUG>/);
  });

  describe.each(TABLE)('%s', (name, valid, invalid, unset) => {
    it.each(valid)('accepts %j', (text, decoded) => {
      expect(parseDriverEnv({ ...withSpec, [name]: text })[name as keyof typeof DriverEnvFields.shape]).toEqual(decoded);
    });

    it.each(invalid)('refuses %j naming the variable', (text, message) => {
      const env = name === 'TCAB_RUN_SPEC' ? { [name]: text } : { ...withSpec, [name]: text };
      let error: unknown;
      try {
        parseDriverEnv(env);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).field).toBe(name);
      const rest = (error as Error).message.slice(`${name}: `.length);
      expect((error as Error).message.startsWith(`${name}: `)).toBe(true);
      if (typeof message === 'string') expect(rest).toBe(message);
      else expect(rest).toMatch(message);
    });

    it('when unset (or empty, but for TCAB_RUN_ID)', () => {
      const env = name === 'TCAB_RUN_SPEC' ? { TCAB_RUN_SPEC_FILE: '/spec.json' } : withSpec;
      expect(parseDriverEnv(env)[name as keyof typeof DriverEnvFields.shape]).toEqual(unset);
      if (name !== 'TCAB_RUN_ID' && name !== 'TCAB_RUN_SPEC') expect(parseDriverEnv({ ...env, [name]: '' })[name as keyof typeof DriverEnvFields.shape]).toEqual(unset);
    });
  });

  it('a spec comes from TCAB_RUN_SPEC or TCAB_RUN_SPEC_FILE: neither, or both, is an error naming them', () => {
    expect(() => parseDriverEnv({})).toThrow(/^TCAB_RUN_SPEC: set TCAB_RUN_SPEC \(JSON\) or TCAB_RUN_SPEC_FILE$/);
    expect(() => parseDriverEnv({ TCAB_RUN_SPEC: '' })).toThrow(/^TCAB_RUN_SPEC: set TCAB_RUN_SPEC/);
    expect(parseDriverEnv({ TCAB_RUN_SPEC_FILE: '/run/spec.json' }).TCAB_RUN_SPEC_FILE).toBe('/run/spec.json');
    expect(() => parseDriverEnv({ ...withSpec, TCAB_RUN_SPEC_FILE: '/run/spec.json' })).toThrow(/^TCAB_RUN_SPEC_FILE: set TCAB_RUN_SPEC or TCAB_RUN_SPEC_FILE, not both$/);
  });

  it('a spec that is JSON but not a RunSpec is "run spec" with each field named, from the variable or a file', () => {
    const bad = JSON.stringify({ harness: 'claude', model: 'claude\u0000x', prompt: 'x', continuePrompt: 'go\u0000' });
    const nul = 'must not contain a NUL character (\\0): it cannot be passed to a process';
    expect(() => parseDriverEnv({ TCAB_RUN_SPEC: bad })).toThrow(new InvalidInputError('run spec', `model: ${nul}; continuePrompt: ${nul}`));
    expect(() => parseRunSpecText(bad, 'TCAB_RUN_SPEC_FILE')).toThrow(new InvalidInputError('run spec', `model: ${nul}; continuePrompt: ${nul}`));
    expect(() => parseRunSpecText('{', 'TCAB_RUN_SPEC_FILE')).toThrow(/^TCAB_RUN_SPEC_FILE: not valid JSON: /);
    expect(parseRunSpecText(JSON.stringify(SPEC), 'TCAB_RUN_SPEC_FILE')).toEqual(RunSpec.parse(SPEC));
  });

  it('several bad variables: the first is the error\'s field, every one is in the message', () => {
    const error = (() => {
      try {
        parseDriverEnv({ ...withSpec, TCAB_RUN_UID: 'abc', TCAB_LOG_LEVEL: 'loud' });
      } catch (caught) {
        return caught as InvalidInputError;
      }
    })();
    expect(error?.field).toBe('TCAB_RUN_UID');
    expect(error?.message).toBe('TCAB_RUN_UID: must be a positive integer uid/gid (not root), got "abc"; TCAB_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
  });

  it('TCAB_BASE_URL_<SLUG>: collected beside the fields, checked as URLs naming the variable, winning over TCAB_BASE_URL', () => {
    const settings = parseDriverEnv({ ...withSpec, TCAB_BASE_URL: 'http://gateway/', TCAB_BASE_URL_GG: 'http://127.0.0.1:9/', TCAB_BASE_URL_QWEN_CODE: 'http://qwen/', TCAB_BASE_URL_: 'http://ignored/' });
    expect(settings.baseUrls).toEqual({ TCAB_BASE_URL_GG: 'http://127.0.0.1:9/', TCAB_BASE_URL_QWEN_CODE: 'http://qwen/' });
    expect(baseUrlFor(settings, 'gg')).toBe('http://127.0.0.1:9/');
    expect(baseUrlFor(settings, 'qwen-code')).toBe('http://qwen/');
    expect(baseUrlFor(settings, 'claude')).toBe('http://gateway/');
    expect(() => parseDriverEnv({ ...withSpec, TCAB_BASE_URL_GG: 'stub:8080' })).toThrow(/^TCAB_BASE_URL_GG: must be an http\(s\) URL, got "stub:8080"$/);
  });

  it('a workstation reads the run settings alone: no spec needed, Pod variables not checked', () => {
    expect(parseRunSettings({ TCAB_RUN_ID: '../x', TCAB_NPM_CACHE: '/c', TCAB_BASE_URL_GG: 'http://stub/' })).toEqual({ TCAB_RUN_ROOT: DEFAULT_RUN_ROOT, TCAB_NPM_REGISTRY: DEFAULT_NPM_REGISTRY, TCAB_NPM_CACHE: '/c', baseUrls: { TCAB_BASE_URL_GG: 'http://stub/' } });
    expect(() => parseRunSettings({ TCAB_NPM_REGISTRY: 'nope' })).toThrow(/^TCAB_NPM_REGISTRY: must be an http\(s\) URL/);
  });

  it('encodes typed values to the text that decodes back to them (only the variables given)', () => {
    const values = { TCAB_RUN_ID: 'ns_r', TCAB_RUN_SPEC: RunSpec.parse(SPEC), TCAB_AWAIT_POD_START_SECONDS: 15, TCAB_RUN_UID: 1000, TCAB_LOG_LEVEL: 'debug' as const };
    const env = encodeDriverEnv(values, { TCAB_BASE_URL_GG: 'http://stub/' });
    expect(env).toEqual({ TCAB_RUN_ID: 'ns_r', TCAB_RUN_SPEC: JSON.stringify(RunSpec.parse(SPEC)), TCAB_AWAIT_POD_START_SECONDS: '15', TCAB_RUN_UID: '1000', TCAB_LOG_LEVEL: 'debug', TCAB_BASE_URL_GG: 'http://stub/' });
    expect(parseDriverEnv(env)).toMatchObject({ ...values, baseUrls: { TCAB_BASE_URL_GG: 'http://stub/' } });
    expect(() => encodeDriverEnv({ TCAB_AWAIT_POD_START_SECONDS: -1 })).toThrow(/TCAB_AWAIT_POD_START_SECONDS[\s\S]*must be a whole number of seconds/);
    expect(() => encodeDriverEnv({ TCAB_RUN_ID: 'a/b' })).toThrow(/is not a run id/);
    expect(() => encodeDriverEnv({ TCAB_RUN_UID: 0 })).toThrow(/not root/);
  });
});

describe('releaseStoreOf (issue 36)', () => {
  it.each([
    ['off', { HOME: '/home/u' }, undefined],
    ['a directory named', { TCAB_RELEASE_STORE: '/srv/releases', HOME: '/home/u' }, '/srv/releases'],
    ['XDG_CACHE_HOME', { XDG_CACHE_HOME: '/home/u/.xdg', HOME: '/home/u' }, '/home/u/.xdg/tcab/releases'],
    ['HOME', { HOME: '/home/u' }, '/home/u/.cache/tcab/releases'],
    ['a relative XDG_CACHE_HOME is ignored (the XDG rule), HOME used', { XDG_CACHE_HOME: 'rel', HOME: '/home/u' }, '/home/u/.cache/tcab/releases'],
    ['no HOME: under the run root', { TCAB_RUN_ROOT: '/runs' }, '/runs/releases'],
  ] as const)('%s', (_, env, want) => {
    const settings = parseRunSettings({ ...(_ === 'off' ? { TCAB_RELEASE_STORE: 'off' } : {}), ...env });
    expect(releaseStoreOf(settings, env)).toBe(want);
  });
});
