// The dispatcher's environment, one variable at a time: defaults, accepted values, and a bad value named.
import { describe, expect, it } from 'vitest';
import { clusterGateway, dispatcherConfig } from './config.ts';
import { InvalidInputError } from '../shared/errors.ts';

describe('dispatcherConfig', () => {
  it('defaults what is unset or empty', () => {
    const unset = dispatcherConfig({});
    expect(unset).toMatchObject({ TCAB_API_HOST: '0.0.0.0', TCAB_RESULT_GRACE_SECONDS: 30, TCAB_LEADER_LEASE: 'tcab-dispatcher', TCAB_LEASE_DURATION_SECONDS: 10, TCAB_LEASE_RETRY_MS: 2000, TCAB_LOG_LEVEL: 'info', TCAB_CONSOLE_ENABLED: true, TCAB_CONSOLE_STALLED_AFTER_SECONDS: 300 });
    expect(unset.TCAB_DISPATCHER_ID).toBeUndefined();
    expect(unset.POD_NAME).toBeUndefined();
    expect(unset.TCAB_NATS_AUTH_SECRET).toBeUndefined();
    const empty = dispatcherConfig({ TCAB_API_HOST: '', TCAB_RESULT_GRACE_SECONDS: '', TCAB_LEADER_LEASE: '', TCAB_LEASE_DURATION_SECONDS: '', TCAB_LEASE_RETRY_MS: '', TCAB_DISPATCHER_ID: '', POD_NAME: '', TCAB_LOG_LEVEL: '', TCAB_NATS_AUTH_SECRET: '', TCAB_SERVICE_ACCOUNT: '', TCAB_CONSOLE_ENABLED: '', TCAB_CONSOLE_STALLED_AFTER_SECONDS: '' });
    expect(empty).toEqual(unset);
  });

  it.each([
    ['TCAB_API_HOST', '127.0.0.1', '127.0.0.1'],
    ['TCAB_RESULT_GRACE_SECONDS', '0', 0],
    ['TCAB_RESULT_GRACE_SECONDS', '2.5', 2.5],
    ['TCAB_LEADER_LEASE', 'other-lease', 'other-lease'],
    ['TCAB_LEASE_DURATION_SECONDS', '5', 5],
    ['TCAB_LEASE_RETRY_MS', '1000', 1000],
    ['TCAB_DISPATCHER_ID', 'dispatcher-1', 'dispatcher-1'],
    ['POD_NAME', 'tcab-dispatcher-abc', 'tcab-dispatcher-abc'],
    ['TCAB_LOG_LEVEL', 'debug', 'debug'],
    ['TCAB_NATS_AUTH_SECRET', 'tcab-nats-auth', 'tcab-nats-auth'],
    ['TCAB_SERVICE_ACCOUNT', 'tcab-dispatcher', 'tcab-dispatcher'],
    ['TCAB_CONSOLE_ENABLED', 'false', false],
    ['TCAB_CONSOLE_ENABLED', 'true', true],
    ['TCAB_CONSOLE_STALLED_AFTER_SECONDS', '60', 60],
  ])('%s=%s', (name, value, want) => {
    expect(dispatcherConfig({ [name]: value })[name as keyof ReturnType<typeof dispatcherConfig>]).toEqual(want);
  });

  it.each([
    ['TCAB_RESULT_GRACE_SECONDS', 'soon'],
    ['TCAB_RESULT_GRACE_SECONDS', '-1'],
    ['TCAB_LEASE_DURATION_SECONDS', '0'],
    ['TCAB_LEASE_DURATION_SECONDS', '2.5'],
    ['TCAB_LEASE_RETRY_MS', '10'],
    ['TCAB_LEASE_RETRY_MS', 'ten'],
    ['TCAB_LOG_LEVEL', 'verbose'],
    ['TCAB_API_PORT', '70000'],
    ['TCAB_CONSOLE_ENABLED', 'yes'],
    ['TCAB_CONSOLE_STALLED_AFTER_SECONDS', '0'],
  ])('%s=%s stops the dispatcher naming the variable', (name, value) => {
    expect(() => dispatcherConfig({ [name]: value })).toThrow(InvalidInputError);
    expect(() => dispatcherConfig({ [name]: value })).toThrow(new RegExp(`${name}: `));
  });

  it('refuses a shared driver NATS user next to per-run credentials, naming it', () => {
    const both = { TCAB_NATS_AUTH_SECRET: 'tcab-nats-auth', TCAB_NATS_SECRET: 'tcab-nats' };
    expect(() => dispatcherConfig(both)).toThrow(InvalidInputError);
    expect(() => dispatcherConfig(both)).toThrow(/TCAB_NATS_SECRET: .*per-run credentials/);
  });
});

describe('dispatcherConfig: who may read, and /metrics (issue 33)', () => {
  it('defaults to the read token in token mode, oauth2-proxy\'s header, 12 h sessions, and no metrics listener', () => {
    expect(dispatcherConfig({})).toMatchObject({ TCAB_API_READ_TOKEN_FILE: '/var/run/tcab/read-token/token', TCAB_CONSOLE_AUTH_MODE: 'token', TCAB_CONSOLE_PROXY_USER_HEADER: 'X-Auth-Request-User', TCAB_CONSOLE_TRUSTED_CIDRS: [], TCAB_CONSOLE_SESSION_SECONDS: 43200 });
    expect(dispatcherConfig({}).TCAB_METRICS_PORT).toBeUndefined();
    expect(dispatcherConfig({ TCAB_CONSOLE_AUTH_MODE: '', TCAB_METRICS_PORT: '' })).toMatchObject({ TCAB_CONSOLE_AUTH_MODE: 'token', TCAB_METRICS_PORT: undefined });
  });

  it('reads the chart\'s values', () => {
    const c = dispatcherConfig({ TCAB_CONSOLE_AUTH_MODE: 'proxy', TCAB_CONSOLE_TRUSTED_CIDRS: '["10.42.0.0/16","fd00::/8"]', TCAB_CONSOLE_PROXY_USER_HEADER: 'X-Forwarded-User', TCAB_CONSOLE_SESSION_SECONDS: '3600', TCAB_METRICS_PORT: '9090' });
    expect(c).toMatchObject({ TCAB_CONSOLE_AUTH_MODE: 'proxy', TCAB_CONSOLE_TRUSTED_CIDRS: ['10.42.0.0/16', 'fd00::/8'], TCAB_CONSOLE_PROXY_USER_HEADER: 'X-Forwarded-User', TCAB_CONSOLE_SESSION_SECONDS: 3600, TCAB_METRICS_PORT: 9090 });
  });

  it.each([
    ['TCAB_CONSOLE_AUTH_MODE', 'none'],
    ['TCAB_CONSOLE_TRUSTED_CIDRS', '10.0.0.0/8'],
    ['TCAB_CONSOLE_TRUSTED_CIDRS', '["10.0.0.0"]'],
    ['TCAB_CONSOLE_TRUSTED_CIDRS', '["10.0.0.0/40"]'],
    ['TCAB_CONSOLE_PROXY_USER_HEADER', 'X User'],
    ['TCAB_CONSOLE_SESSION_SECONDS', '10'],
    ['TCAB_METRICS_PORT', '0'],
    ['TCAB_METRICS_PORT', '70000'],
  ])('%s=%s stops the dispatcher naming the variable', (name, value) => {
    expect(() => dispatcherConfig({ [name]: value })).toThrow(new RegExp(`${name}: `));
  });

  it('proxy mode without trusted CIDRs is refused (it would trust no proxy, or be read as trusting all)', () => {
    expect(() => dispatcherConfig({ TCAB_CONSOLE_AUTH_MODE: 'proxy' })).toThrow(/TCAB_CONSOLE_TRUSTED_CIDRS: proxy mode needs/);
  });
});

describe('the cluster\'s model gateway (issue 34)', () => {
  const files: Record<string, string> = { '/gw/signing-key': `${Buffer.alloc(48, 1).toString('base64')}\n`, '/gw/admin-token': 'admin-token-of-at-least-24-chars\n', '/gw/short': Buffer.alloc(8).toString('base64'), '/gw/empty': '  \n' };
  const read = (path: string) => {
    if (!(path in files)) throw new Error(`ENOENT: ${path}`);
    return files[path]!;
  };
  const env = { TCAB_GATEWAY_URL: 'http://t-tcab-gateway.ns.svc.cluster.local:8080/', TCAB_GATEWAY_SIGNING_KEY_FILE: '/gw/signing-key', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/gw/admin-token' };

  it('unset: no gateway, keys are injected as before', () => {
    expect(dispatcherConfig({}).TCAB_GATEWAY_URL).toBeUndefined();
    expect(clusterGateway(dispatcherConfig({ TCAB_GATEWAY_URL: '' }), read)).toBeUndefined();
  });

  it('set: its URL (no trailing slash), the signing key and the admin token read from their files', () => {
    expect(clusterGateway(dispatcherConfig(env), read)).toEqual({ url: 'http://t-tcab-gateway.ns.svc.cluster.local:8080', signingKey: Buffer.alloc(48, 1), adminToken: 'admin-token-of-at-least-24-chars' });
  });

  it.each([
    ['a URL that is not http(s)', { ...env, TCAB_GATEWAY_URL: 'nats://x:1' }, /TCAB_GATEWAY_URL: /],
    ['no signing key file', { ...env, TCAB_GATEWAY_SIGNING_KEY_FILE: '' }, /TCAB_GATEWAY_URL: .*TCAB_GATEWAY_SIGNING_KEY_FILE/],
    ['no admin token file', { TCAB_GATEWAY_URL: env.TCAB_GATEWAY_URL, TCAB_GATEWAY_SIGNING_KEY_FILE: '/gw/signing-key' }, /TCAB_GATEWAY_ADMIN_TOKEN_FILE/],
  ])('%s stops the dispatcher naming the variable', (_, values, message) => {
    expect(() => dispatcherConfig(values)).toThrow(InvalidInputError);
    expect(() => dispatcherConfig(values)).toThrow(message);
  });

  it.each([
    ['a missing file', { ...env, TCAB_GATEWAY_SIGNING_KEY_FILE: '/gw/none' }, /^TCAB_GATEWAY_SIGNING_KEY_FILE: cannot read \/gw\/none/],
    ['a key shorter than 32 bytes', { ...env, TCAB_GATEWAY_SIGNING_KEY_FILE: '/gw/short' }, /^TCAB_GATEWAY_SIGNING_KEY_FILE: must be at least 32 random bytes/],
    ['an empty admin token', { ...env, TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/gw/empty' }, /^TCAB_GATEWAY_ADMIN_TOKEN_FILE: \/gw\/empty is empty/],
  ])('%s stops the start naming its variable, never the content', (_, values, message) => {
    expect(() => clusterGateway(dispatcherConfig(values), read)).toThrow(message);
  });
});

describe('TCAB_DRIVER_PLACEMENT (issue 35)', () => {
  const defaults = { nodeSelector: {}, tolerations: [], spread: { enabled: true, maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' }, nodeLostTolerationSeconds: 30 };

  it('unset or {}: the defaults; a partial object fills in the rest', () => {
    expect(dispatcherConfig({}).TCAB_DRIVER_PLACEMENT).toEqual(defaults);
    expect(dispatcherConfig({ TCAB_DRIVER_PLACEMENT: '{}' }).TCAB_DRIVER_PLACEMENT).toEqual(defaults);
    expect(dispatcherConfig({ TCAB_DRIVER_PLACEMENT: '{"spread":{"enabled":false},"nodeLostTolerationSeconds":0}' }).TCAB_DRIVER_PLACEMENT).toEqual({ ...defaults, spread: { ...defaults.spread, enabled: false }, nodeLostTolerationSeconds: 0 });
  });

  it('reads what the chart renders (every field given)', () => {
    const chart = { nodeSelector: { pool: 'drivers' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'evals', effect: 'NoSchedule' }], spread: { enabled: true, maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }, nodeLostTolerationSeconds: 60 };
    expect(dispatcherConfig({ TCAB_DRIVER_PLACEMENT: JSON.stringify(chart) }).TCAB_DRIVER_PLACEMENT).toEqual(chart);
  });

  it.each([
    ['malformed JSON', '{spread:', /in JSON at position/],
    ['not an object', '[]', /expected object/],
    ['a string for the seconds', '{"nodeLostTolerationSeconds":"30"}', /nodeLostTolerationSeconds: /],
    ['negative seconds', '{"nodeLostTolerationSeconds":-1}', /nodeLostTolerationSeconds: /],
    ['fractional seconds', '{"nodeLostTolerationSeconds":1.5}', /nodeLostTolerationSeconds: /],
    ['an unknown whenUnsatisfiable', '{"spread":{"whenUnsatisfiable":"Sometimes"}}', /spread\.whenUnsatisfiable: /],
    ['maxSkew 0', '{"spread":{"maxSkew":0}}', /spread\.maxSkew: /],
    ['a non-string nodeSelector value', '{"nodeSelector":{"pool":1}}', /nodeSelector\.pool: /],
    ['tolerations not a list', '{"tolerations":{"key":"a"}}', /tolerations: /],
    ['a misspelt toleration field', '{"tolerations":[{"key":"a","efect":"NoSchedule"}]}', /tolerations\[0\]: .*efect/],
    ['a toleration of every key that is not Exists', '{"tolerations":[{"effect":"NoSchedule"}]}', /tolerations\[0\]\.operator: must be Exists/],
    ['tolerationSeconds without NoExecute', '{"tolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}]}', /tolerations\[0\]\.effect: must be NoExecute/],
    ['an unknown field', '{"spred":{}}', /spred/],
  ])('%s stops the dispatcher naming TCAB_DRIVER_PLACEMENT and the field', (_, value, detail) => {
    expect(() => dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value })).toThrow(InvalidInputError);
    expect(() => dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value })).toThrow(/TCAB_DRIVER_PLACEMENT: must be a JSON object \{nodeSelector, tolerations, spread, nodeLostTolerationSeconds\}: /);
    expect(() => dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value })).toThrow(detail);
  });
});
