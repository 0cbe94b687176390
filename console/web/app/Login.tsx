// The login page (issue 33): the read token, in a modal like the write token's dialog (auth.tsx), POSTed to the
// session route; the page's data shows only once the server answers with a session. And the header's session
// control: how this browser reads, and Log out.
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { formatClock } from '../format.ts';
import { access, logIn, logOut } from './session.ts';

export function LoginPage({ reason }: { reason: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const error = useSignal<string | undefined>(undefined);
  const busy = useSignal(false);
  useEffect(() => {
    document.title = 'Log in · tcab console';
    const el = dialog.current;
    if (el && !el.open) el.showModal();
    input.current?.focus();
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = input.current?.value.trim();
    if (!token) return;
    busy.value = true;
    error.value = await logIn(token);
    busy.value = false;
    if (error.value && input.current) {
      input.current.value = '';
      input.current.focus();
    }
  };
  return (
    // Nothing lies behind it to go back to: Escape does not close it.
    <dialog ref={dialog} class="token-dialog login-dialog" aria-labelledby="login-title" aria-describedby="login-why" onCancel={(e) => e.preventDefault()}>
      <form method="dialog" onSubmit={(e) => void submit(e)}>
        <h2 id="login-title">Log in to the tcab console</h2>
        <p id="login-why">{reason}</p>
        <p class="small muted">
          The read token is in the install's Secret <code>&lt;release&gt;-tcab-read-token</code> (the install's notes say how to get it); the write token works too and is then also used for
          writes in this tab. A session cookie keeps you logged in; the read token itself is not stored.
        </p>
        <label for="login-token">Read token</label>
        <input id="login-token" ref={input} type="password" autocomplete="off" spellcheck={false} required aria-invalid={error.value ? 'true' : undefined} aria-errormessage={error.value ? 'login-error' : undefined} />
        {error.value && (
          <p id="login-error" class="error" role="alert">
            {error.value}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy.value}>
            Log in
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** The header's read session: who this is (a proxy's user, or a session until when) and Log out. */
export function SessionStatus() {
  const a = access.value;
  if (a.status !== 'in') return null;
  const { via, user, expiresAt, credential } = a.session;
  const text =
    via === 'proxy' ? `Signed in as ${user}` : via === 'open' ? 'Open install: no login needed' : via === 'session' ? `Logged in (${credential === 'write-token' ? 'write' : 'read'} token)${expiresAt ? ` until ${formatClock(expiresAt, Date.now())}` : ''}` : 'Reading with a bearer token';
  return (
    <span class="session-status" data-via={via}>
      {text}
      {via === 'session' && (
        <>
          {' '}
          <button type="button" class="link" onClick={() => void logOut()}>
            Log out
          </button>
        </>
      )}
    </span>
  );
}
