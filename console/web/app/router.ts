// Client-side navigation between the console's pages (the server serves the same html at each path).
import { signal } from '@preact/signals';
import { parseRoute, type Route } from '../routes.ts';

export const route = signal<Route>(parseRoute(location.pathname));
export const search = signal(location.search);

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  sync();
}

function sync(): void {
  route.value = parseRoute(location.pathname);
  search.value = location.search;
}

addEventListener('popstate', sync);

/** Lets a plain left click on an internal link navigate without a reload (modifier clicks open tabs as usual). */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element).closest('a');
  if (!a || a.target || a.origin !== location.origin || a.hasAttribute('download')) return;
  const url = new URL(a.href);
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  if (parseRoute(url.pathname).page === 'not-found') return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
  if (!url.hash) scrollTo(0, 0);
}
