// Writes (a cap change, a cancel) need the write token, whatever read session the tab has (Login.tsx). The console
// asks for it once, in a modal dialog, and keeps it in sessionStorage (this tab only, gone when it closes). A 401
// forgets it and says so plainly.
import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';

const KEY = 'tcab-console-token';
export const token = signal<string | null>(sessionStorage.getItem(KEY));
/** Set while the dialog is open: resolves with the token entered, or null when the operator dismissed it. */
const pending = signal<((value: string | null) => void) | null>(null);
const dialogReason = signal('');

export function setToken(value: string | null): void {
  token.value = value;
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

let asking: Promise<string | null> | null = null;

/** Opens the dialog, or joins the one already open (two writes at once ask once). */
function askForToken(reason: string): Promise<string | null> {
  if (asking) return asking;
  dialogReason.value = reason;
  asking = new Promise<string | null>((resolve) => (pending.value = resolve)).finally(() => (asking = null));
  return asking;
}

export class WriteError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** POSTs JSON with the bearer token, asking for the token first when the tab has none. */
export async function postWithToken(url: string, body: unknown, purpose: string): Promise<unknown> {
  const bearer = token.value ?? (await askForToken(purpose));
  if (!bearer) throw new WriteError('No token given: nothing was changed.', 0);
  setToken(bearer);
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const payload: unknown = await res.json().catch(() => undefined);
  if (res.status === 401) {
    setToken(null);
    throw new WriteError('401 Unauthorized: the API refused this token, so nothing was changed. It has been forgotten; try again to enter the right one.', 401);
  }
  if (!res.ok) {
    const detail = (payload as { error?: string } | undefined)?.error;
    throw new WriteError(`${res.status} ${res.statusText}${detail ? `: ${detail}` : ''}`, res.status);
  }
  return payload;
}

export function TokenDialog() {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const resolve = pending.value;
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (resolve && !el.open) {
      el.showModal();
      input.current?.focus();
    } else if (!resolve && el.open) el.close();
  }, [resolve]);

  const finish = (value: string | null) => {
    const done = pending.value;
    pending.value = null;
    if (input.current) input.current.value = '';
    done?.(value);
  };
  return (
    <dialog ref={dialog} class="token-dialog" aria-labelledby="token-title" aria-describedby="token-why" onClose={() => pending.value && finish(null)}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          finish(input.current?.value.trim() || null);
        }}
      >
        <h2 id="token-title">API token needed</h2>
        <p id="token-why">
          To {dialogReason.value}, enter the write token (the dispatcher API's bearer token; the read token you logged in with does not write). It is kept in this browser tab only
          (sessionStorage) until the tab closes.
        </p>
        <label for="token-input">Bearer token</label>
        <input id="token-input" ref={input} type="password" autocomplete="off" spellcheck={false} required />
        <div class="actions">
          <button type="submit" class="primary">
            Use token
          </button>
          <button type="button" onClick={() => finish(null)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** The header's token control: whether a token is held, and a way to forget it. */
export function TokenStatus() {
  if (!token.value) return <span class="token-status">No API token (asked on first write)</span>;
  return (
    <span class="token-status">
      API token set{' '}
      <button type="button" class="link" onClick={() => setToken(null)}>
        Forget token
      </button>
    </span>
  );
}
