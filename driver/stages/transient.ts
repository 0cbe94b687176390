// Whether an install failed on the registry or the network (worth another attempt on a new Pod) or on something
// another attempt would meet again (a package or version that does not exist, a permission, a full disk). Read from
// npm's own error lines, pure. Only what npm says is read: a failure it does not name as a network or registry
// error is not retried (never guessed).
//   npm error code E500 / E502 / E503 / E504 / E429   the registry (or the cache in front of it) answered so
//   npm error code ECONNRESET / ECONNREFUSED / ETIMEDOUT / EAI_AGAIN / ENOTFOUND / EPIPE / ECONNABORTED / EHOSTUNREACH /
//                  ENETUNREACH / ESOCKETTIMEDOUT / ERR_SOCKET_TIMEOUT   the connection failed
//   "network request to ... failed" / "network socket disconnected"  npm's words for the same
const TRANSIENT_CODES = /\bnpm (?:error|ERR!) code (E50[0234]|E429|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE|ECONNABORTED|EHOSTUNREACH|ENETUNREACH|ESOCKETTIMEDOUT|ERR_SOCKET_TIMEOUT)\b/;
const TRANSIENT_WORDS = /\bnpm (?:error|ERR!) (?:network request to \S+ failed|network socket disconnected|network aborted)/i;

export function isTransientInstallFailure(output: string): boolean {
  return TRANSIENT_CODES.test(output) || TRANSIENT_WORDS.test(output);
}
