// Who the browser is to the server (issue 33): every data stream needs a read credential. A browser holds it as a
// session cookie (HttpOnly: this code never sees it) made by POSTing the read token (or the write token) to the
// session route; GET on that route says whether the cookie (or a trusted proxy's user) still counts. When a stream
// is refused, the page asks it once and shows the login instead of reconnecting in a loop.
import { signal } from '@preact/signals';
import type { SessionState } from '../../../shared/read-auth.ts';
import { tokenFromHash } from '../login-fragment.ts';
import { PATHS } from '../wire.ts';
import { setToken } from './auth.tsx';

export type Access = { status: 'checking' } | { status: 'in'; session: SessionState } | { status: 'out'; reason: string };

export const access = signal<Access>({ status: 'checking' });

export const SESSION_ENDED = 'Your session ended (it expired, you logged out in another tab, or the token was rotated). Log in again.';

/**
 * Asks the server whether this browser may read: true (the page goes on), false (the login is shown), undefined
 * when the server could not be asked (restarting: the caller retries as before).
 */
export async function checkAccess(reasonIfOut = SESSION_ENDED): Promise<boolean | undefined> {
  let state: SessionState;
  try {
    const res = await fetch(PATHS.session, { cache: 'no-store' });
    if (!res.ok) return undefined;
    state = (await res.json()) as SessionState;
  } catch {
    return undefined;
  }
  access.value = state.authenticated ? { status: 'in', session: state } : { status: 'out', reason: reasonIfOut };
  return state.authenticated;
}

/** Logs in with a token; resolves with what went wrong, or undefined once in. */
export async function logIn(token: string): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(PATHS.session, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  } catch (error) {
    return `The console server could not be reached: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (res.status === 401) return 'The console refused this token: it is neither the read token nor the write token.';
  if (!res.ok) return `${res.status} ${res.statusText}`;
  const state = (await res.json()) as SessionState;
  // The write token reads too, and this tab would ask for it on its first write: keep it as the dialog would.
  if (state.credential === 'write-token') setToken(token);
  access.value = { status: 'in', session: state };
  return undefined;
}

/** Ends the session (the server clears the cookie) and forgets the write token this tab held. */
export async function logOut(): Promise<void> {
  setToken(null);
  try {
    const res = await fetch(PATHS.session, { method: 'DELETE' });
    const state = (await res.json()) as SessionState;
    // A proxy's user still counts without the cookie: then there is nothing to log out of here.
    if (state.authenticated) return void (access.value = { status: 'in', session: state });
  } catch {
    // The cookie may be left if the server was unreachable; the page still stops showing data.
  }
  access.value = { status: 'out', reason: 'You logged out.' };
}

/** At page load: a `#token=` fragment logs in (and leaves the address bar first); else the server says. */
export async function startAccess(): Promise<void> {
  if (location.hash.startsWith('#token=')) {
    const token = tokenFromHash(location.hash);
    // Out of the address bar and this history entry before anything awaits: not in a bookmark, a screenshot, Back.
    history.replaceState(history.state, '', location.pathname + location.search);
    const error = token === undefined ? 'The login link carried no token.' : await logIn(token);
    if (error) access.value = { status: 'out', reason: error };
    return;
  }
  const authenticated = await checkAccess('Log in with the read token to see the runs.');
  if (authenticated === undefined) access.value = { status: 'out', reason: 'The console server could not be asked who you are. Log in, or reload the page.' };
}
