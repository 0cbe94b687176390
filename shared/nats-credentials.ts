// NATS server URLs as messages show them: the driver's sink, `tcab events` and the dispatcher name a server in
// errors and logs, and a URL may carry a user and password or a token (nats://user:pass@host), which must never
// reach a log, an event or a terminal. Here, below all of them, so none imports another's layer to redact.

/** A server URL fit for a message: the user and password (or token) in it are dropped. */
export function withoutCredentials(server: string): string {
  return server.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/i, '$1');
}

/** A comma-separated server list (a cluster's seeds), each without its credentials. */
export const shownServers = (servers: string) => servers.split(',').map((s) => withoutCredentials(s.trim())).join(', ');
