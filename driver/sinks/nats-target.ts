// What the driver may say about the NATS server it publishes to: which secrets its URLs carry (to keep them out of
// everything printed) and why a connection failed, in words a user can act on. Pure; nats.js's own parser decides
// what is malformed. URLs are shown with shared/nats-credentials.ts's withoutCredentials, as `tcab events` shows them.

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
