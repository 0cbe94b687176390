// `tcab console` prints a login URL with the token in its fragment (http://127.0.0.1:8080/#token=...): a fragment
// never reaches the server, its logs or a proxy's. The page reads it here, then drops it from the address bar and
// history before anything else runs. Pure.

/** The token of a `#token=<token>` fragment (percent-decoded), or undefined for any other fragment. */
export function tokenFromHash(hash: string): string | undefined {
  const m = /^#token=([^&#]+)$/.exec(hash);
  if (!m) return undefined;
  try {
    const token = decodeURIComponent(m[1]!).trim();
    return token || undefined;
  } catch {
    return undefined;
  }
}
