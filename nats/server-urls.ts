// NATS server URLs as messages show them, and connection failures in words a user can act on. A URL may carry a
// user and password or a token (nats://user:pass@host), which must never reach a log, an event or a terminal: the
// driver's sink, `tcab events` and the dispatcher all name servers through here. Pure; nats.js's own parser decides
// what is malformed when connecting.
import { InvalidInputError } from '../shared/errors.ts';

/** A server URL fit for a message: the user and password (or token) in it are dropped. */
export function withoutCredentials(server: string): string {
  return server.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/i, '$1');
}

/** A server list (a comma-separated string of a cluster's seeds, or a list), each without its credentials. */
export function shownServers(servers: string | readonly string[]): string {
  const list = typeof servers === 'string' ? servers.split(',') : servers;
  return list.map((s) => withoutCredentials(s.trim())).join(', ');
}

/** Secrets carried in server URLs (the password of user:password, or a token), for the scrubber and error texts. */
export function serverCredentials(servers: readonly string[]): string[] {
  return servers.flatMap((server) => {
    const at = server.lastIndexOf('@');
    if (at === -1) return [];
    const scheme = server.indexOf('://');
    const userinfo = server.slice(scheme === -1 ? 0 : scheme + 3, at);
    // The user name is not a secret (scrubbing it would blank every mention of, say, "tcab").
    const secret = userinfo.includes(':') ? userinfo.slice(userinfo.indexOf(':') + 1) : userinfo;
    return secret.length === 0 ? [] : [...new Set([secret, safeDecode(secret)])];
  });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Refuses a server that is not a URL, naming the option or variable it came from (`--nats`): for callers that stop
 * on a bad setting (exit 2). The driver does not: it reports the parse error and keeps running (its events go to
 * the pod log).
 */
export function checkServerUrls(servers: readonly string[], field: string): void {
  for (const server of servers) {
    let url: URL | undefined;
    try {
      url = new URL(server.includes('://') ? server : `nats://${server}`);
    } catch {
      url = undefined;
    }
    if (!url?.hostname) throw new InvalidInputError(field, `"${withoutCredentials(server)}" is not a NATS server URL (e.g. nats://127.0.0.1:4222)`);
  }
}

export interface ConnectFailure {
  /** A malformed URL never becomes valid: retrying it is pointless. */
  permanent: boolean;
  reason: string;
}

/** Why connecting failed: the parse error for a malformed URL, refused / not found / timed out for the rest. */
export function describeConnectFailure(error: unknown, secrets: readonly string[] = []): ConnectFailure {
  const e = error as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(error);
  let failure: ConnectFailure;
  if (code === 'ERR_INVALID_URL') failure = { permanent: true, reason: `malformed URL (${message})` };
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') failure = { permanent: false, reason: `host not found (DNS: ${message})` };
  else if (e?.name === 'TimeoutError' || /timeout|timed out/i.test(message)) failure = { permanent: false, reason: `no answer (${message})` };
  else failure = { permanent: false, reason: message };
  // Error texts may echo what they were given; credentials never leave.
  for (const secret of secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) failure.reason = failure.reason.replaceAll(secret, '***');
  return failure;
}

/** An error's message with its cause's, when the cause says more (nats.js wraps socket errors). */
export function reasonOf(error: unknown): string {
  const e = error as Error & { cause?: unknown };
  const cause = e.cause instanceof Error && e.cause.message !== e.message ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
}
