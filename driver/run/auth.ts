// The run's auth, resolved before anything is installed: an unavailable harness fails before a session is spent.
// With the offline stub: the stub's throw-away key. Otherwise the shared resolver (shared/auth.ts) on the caller's
// environment and credential source; the credentials themselves are materialised once the run's HOME exists.
import type { HarnessManifest } from '../../shared/manifest.ts';
import type { RunSpec } from '../../shared/run.ts';
import { resolveAuth } from '../../shared/auth.ts';
import { credentialPresenceChecker, materializeCredentials } from '../credentials.ts';
import type { CredentialSource } from '../credentials.ts';
import { holdLogin, loginBusyMessage } from '../login-lock.ts';
import type { RunUser } from '../process.ts';
import { StageFailure } from '../stages/context.ts';
import type { RunState } from './state.ts';

export interface RunAuth {
  /** What the harness's sessions get besides the base environment: the key, or what the credentials set. */
  secretEnv: Record<string, string>;
  /** The variable the key came from (api-key mode): the gateway routes by it. */
  keyVar?: string;
  /** Puts the credentials in the run's HOME (a rotating login: after its lock); absent when there are none to put. */
  materialize?: () => Promise<void>;
}

export interface AuthOptions {
  env: Readonly<Record<string, string | undefined>>;
  credentialSource: CredentialSource;
  user: RunUser;
  stub?: { baseUrl: string; apiKey: string };
}

export function resolveRunAuth(run: RunState, spec: RunSpec, manifest: HarnessManifest, options: AuthOptions): RunAuth {
  if (options.stub) {
    run.authMode = 'api-key';
    const key = manifest.auth.api_key;
    return { secretEnv: key ? { [key.inject_as]: options.stub.apiKey, ...key.inject_env } : {}, ...(key?.host_vars[0] ? { keyVar: key.host_vars[0] } : {}) };
  }
  run.running = 'auth';
  const resolution = resolveAuth(manifest.auth, manifest.slug, {
    env: options.env,
    credentialFilePresent: credentialPresenceChecker(options.credentialSource),
    specOverride: spec.authMode,
  });
  if (!resolution.available) throw new StageFailure('auth', 'infrastructure', `${manifest.name} is not available: ${resolution.reason}`);
  run.authMode = resolution.mode;
  run.running = 'driver';
  const auth: RunAuth = { secretEnv: {}, ...(resolution.mode === 'api-key' ? { keyVar: resolution.keyVar } : {}) };
  auth.materialize = async () => {
    run.running = 'auth';
    const ctx = run.ctx!;
    const signal = run.abort.signal;
    // A login whose refresh token rotates on use: one run at a time holds it (login-lock.ts); the wait is
    // queueing, so it does not count against the run's maximum runtime.
    const waitStarted = Date.now();
    run.login = await holdLogin(manifest, resolution, options.credentialSource, {
      signal,
      onWait: (holder) => run.emit({ type: 'warning', timestamp: run.now(), message: loginBusyMessage(manifest, holder), code: 'login_busy' }),
    }).catch((error: unknown) => {
      throw signal.aborted ? new StageFailure('auth', 'cancelled', 'cancelled while waiting for the login', { cause: error }) : error;
    });
    ctx.deadline += Date.now() - waitStarted;
    const materialized = await materializeCredentials(resolution, {
      env: options.env,
      source: options.credentialSource,
      runHome: ctx.dirs.home,
      runUid: options.user.uid,
      runGid: options.user.gid,
    });
    run.scrubber.add(...materialized.secrets);
    auth.secretEnv = materialized.env;
    run.running = 'driver';
  };
  return auth;
}
