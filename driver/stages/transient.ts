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

/**
 * The fetches npm gave up on, read from its debug log (npm writes one per command, at every level, into its
 * logs-dir). npm ends an install with exit 0 when what it could not fetch was an optional dependency (a CLI's
 * per-platform binary package: Claude Code's), leaving the CLI unable to start: measured, a 503 or a connection reset
 * on the optional package's packument gives "added 1 package", exit 0. A URL counts when npm's last word on it is
 *   http fetch GET <url> attempt <n> failed with <code>     (a connection error: no final line follows)
 *   http fetch GET <500|502|503|504|429> <url> ...          (the registry's answer after npm's own retries)
 * and not when a later `http fetch GET <2xx|304> <url>` fetched it. A 404 is not transient and not counted here.
 */
export function unfetchedInNpmLog(log: string): { url: string; error: string }[] {
  const last = new Map<string, string | undefined>();
  for (const line of log.split('\n')) {
    const failed = /\bhttp fetch GET (\S+) attempt \d+ failed with (\S+)/.exec(line);
    if (failed) {
      last.set(failed[1]!, failed[2]!);
      continue;
    }
    const answered = /\bhttp fetch GET (\d{3}) (\S+)/.exec(line);
    if (!answered) continue;
    const status = Number(answered[1]);
    last.set(answered[2]!, status === 429 || (status >= 500 && status <= 504 && status !== 501) ? String(status) : undefined);
  }
  return [...last].flatMap(([url, error]) => (error === undefined ? [] : [{ url, error }]));
}

/**
 * npm's lines around an install script: `info run <name>@<version> <event> <path relative to the prefix's lib>
 * <command>` as it starts, `info run <name>@<version> <event> { code: <n>, signal: <s> }` as it ends.
 */
const SCRIPT_START = /\binfo run (\S+) (\S+) ([^{\s]\S*) /;
const SCRIPT_END = /\binfo run (\S+) (\S+) \{ code: (\S+?), signal: (\S+?) \}/;
const DROPPED_OPTIONAL = /\bverbose reify failed optional dependency (\S.*?)\s*$/;

/**
 * The optional dependencies npm dropped from an install that exited 0 because it could not download or unpack them,
 * read from its debug log: npm's line `verbose reify failed optional dependency <absolute path>`, when no install
 * script of the install failed. Measured (npm 11.19): a tarball whose body is cut mid-download (the registry, or
 * the cache in front of it, going away while it streams: Claude Code's per-platform binary is the big download)
 * gives no "failed with" line, only that one, then "added 1 package", exit 0. The same line follows an optional
 * dependency's own install script failing (its `info run` end line with a code other than 0 just before), for every
 * package of that dependency's optional set: none is counted then, as another attempt would run the same script. A dependency meant for another platform is skipped
 * without the line.
 */
export function droppedOptionalInNpmLog(log: string): string[] {
  const scriptPaths = new Map<string, string>();
  const failedScripts: string[] = [];
  const dropped: string[] = [];
  for (const line of log.split('\n')) {
    const end = SCRIPT_END.exec(line);
    if (end) {
      const path = scriptPaths.get(`${end[1]} ${end[2]}`);
      if (path !== undefined && (end[3] !== '0' || end[4] !== 'null')) failedScripts.push(path);
      continue;
    }
    const start = SCRIPT_START.exec(line);
    if (start) {
      scriptPaths.set(`${start[1]} ${start[2]}`, start[3]!);
      continue;
    }
    const failed = DROPPED_OPTIONAL.exec(line);
    if (failed) dropped.push(failed[1]!);
  }
  // A failed install script drops its package's whole optional set (measured with Gemini CLI run as an unprivileged
  // user: node-pty's native build fails, and nan, its dependency, is logged dropped too), so once any script failed
  // no dropped dependency is taken for a download cut: never a guess.
  return failedScripts.length > 0 ? [] : [...new Set(dropped)];
}
