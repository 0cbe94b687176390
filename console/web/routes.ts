// The console's page paths and deep links, pure (the server serves the same html at each path; the app picks the page).

/** `#seq-42` -> 42; anything else -> undefined. */
export function seqFromHash(hash: string): number | undefined {
  const m = /^#seq-(\d+)$/.exec(hash);
  return m ? Number(m[1]) : undefined;
}

export type Route =
  | { page: 'runs' }
  | { page: 'run'; namespace: string; name: string }
  | { page: 'harnesses' }
  | { page: 'evaluations' }
  | { page: 'evaluation'; namespace: string; name: string }
  | { page: 'not-found' };

/** The console's pages by path: `/` and `/runs`, `/runs/:namespace/:name`, `/harnesses`, `/evaluations`, `/evaluations/:namespace/:name`. */
export function parseRoute(pathname: string): Route {
  const parts = pathname.replace(/\/+$/, '').split('/').slice(1);
  if (parts.length === 0 || (parts.length === 1 && (parts[0] === '' || parts[0] === 'runs'))) return { page: 'runs' };
  if (parts.length === 1 && parts[0] === 'harnesses') return { page: 'harnesses' };
  if (parts.length === 1 && parts[0] === 'evaluations') return { page: 'evaluations' };
  if (parts.length === 3 && (parts[0] === 'runs' || parts[0] === 'evaluations') && parts[1] && parts[2]) {
    try {
      return { page: parts[0] === 'runs' ? 'run' : 'evaluation', namespace: decodeURIComponent(parts[1]), name: decodeURIComponent(parts[2]) };
    } catch {
      return { page: 'not-found' };
    }
  }
  return { page: 'not-found' };
}

export const runPath = (namespace: string, name: string) => `/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
export const evaluationPath = (namespace: string, name: string) => `/evaluations/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
