// The cluster gateway process's settings (shared/gateway.ts GATEWAY_ENV), from its environment: pure, and every
// error names the variable. The provider keys are not here: keysFromEnv reads them (their variables are the ones
// the harnesses read: ANTHROPIC_API_KEY, OPENAI_API_KEY, ...).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { GATEWAY_ENV, PROVIDER_NAME } from '../shared/gateway.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { logLevelFrom } from '../shared/log.ts';
import type { LogLevel } from '../shared/log.ts';
import { signingKeyFrom } from './token.ts';

/** Shortest admin token accepted: the dispatcher's revoke and the throttle report are behind it. */
export const MIN_ADMIN_TOKEN_CHARS = 24;

/** 0: any free port (tests); the chart sets both. */
const Port = z.coerce.number().int().min(0).max(65535);
const Upstreams = z.record(z.string().regex(PROVIDER_NAME), z.url({ protocol: /^https?$/ }));

export interface GatewaySettings {
  port: number;
  metricsPort: number;
  signingKey: Buffer;
  adminToken: string;
  upstreams: Record<string, string>;
  logLevel: LogLevel;
}

function fileOf(env: Readonly<Record<string, string | undefined>>, variable: string, read: (path: string) => string): string {
  const path = env[variable];
  if (!path) throw new InvalidInputError(variable, 'must name a file (the chart mounts the gateway auth Secret there)');
  try {
    return read(path).trim();
  } catch (error) {
    throw new InvalidInputError(variable, `cannot read ${path}: ${(error as Error).message}`);
  }
}

export function gatewaySettings(env: Readonly<Record<string, string | undefined>>, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): GatewaySettings {
  const port = Port.safeParse(env[GATEWAY_ENV.port] ?? 8080);
  if (!port.success) throw new InvalidInputError(GATEWAY_ENV.port, 'must be a port number');
  const metricsPort = Port.safeParse(env[GATEWAY_ENV.metricsPort] ?? 9090);
  if (!metricsPort.success) throw new InvalidInputError(GATEWAY_ENV.metricsPort, 'must be a port number');
  if (metricsPort.data === port.data && port.data !== 0) throw new InvalidInputError(GATEWAY_ENV.metricsPort, 'must differ from the proxy port (runs reach that one, not metrics)');
  const signingKey = signingKeyFrom(fileOf(env, GATEWAY_ENV.signingKeyFile, read), GATEWAY_ENV.signingKeyFile);
  const adminToken = fileOf(env, GATEWAY_ENV.adminTokenFile, read);
  if (adminToken.length < MIN_ADMIN_TOKEN_CHARS) throw new InvalidInputError(GATEWAY_ENV.adminTokenFile, `the admin token must be at least ${MIN_ADMIN_TOKEN_CHARS} characters`);
  let upstreams: Record<string, string> = {};
  const rawUpstreams = env[GATEWAY_ENV.upstreams];
  if (rawUpstreams) {
    let json: unknown;
    try {
      json = JSON.parse(rawUpstreams);
    } catch {
      throw new InvalidInputError(GATEWAY_ENV.upstreams, 'must be JSON: {"<provider>": "<base URL>"}');
    }
    const parsed = Upstreams.safeParse(json);
    if (!parsed.success) throw new InvalidInputError(GATEWAY_ENV.upstreams, parsed.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; '));
    upstreams = parsed.data;
  }
  return { port: port.data, metricsPort: metricsPort.data, signingKey, adminToken, upstreams, logLevel: logLevelFrom(env) };
}
