// Cancel: a confirmation first (a cancelled evaluation run cannot be resumed), then the POST with the bearer token.
import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { PATHS } from '../../wire.ts';
import { postWithToken, WriteError } from '../auth.tsx';

export function CancelRun({ namespace, name }: { namespace: string; name: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const state = useSignal<{ busy: boolean; error?: string; done?: boolean }>({ busy: false });
  const confirm = async () => {
    dialog.current?.close();
    state.value = { busy: true };
    try {
      await postWithToken(PATHS.cancel(namespace, name), {}, `cancel ${namespace}/${name}`);
      state.value = { busy: false, done: true };
    } catch (error) {
      state.value = { busy: false, error: error instanceof WriteError ? error.message : `Cancel failed: ${(error as Error).message}` };
    }
  };
  return (
    <>
      <button type="button" class="danger" disabled={state.value.busy || state.value.done} onClick={() => dialog.current?.showModal()}>
        {state.value.busy ? 'Cancelling…' : 'Cancel run'}
      </button>
      {state.value.done && (
        <span role="status" class="ok-text">
          Cancel requested; the run will end Cancelled.
        </span>
      )}
      {state.value.error && (
        <p role="alert" class="error" data-status={state.value.error.startsWith('401') ? '401' : undefined}>
          {state.value.error}
        </p>
      )}
      <dialog ref={dialog} aria-labelledby="cancel-title" class="confirm-dialog">
        <h2 id="cancel-title">Cancel {name}?</h2>
        <p>The harness is stopped and the Run ends Cancelled. This cannot be undone.</p>
        <div class="actions">
          <button type="button" class="danger" onClick={confirm}>
            Yes, cancel the run
          </button>
          <button type="button" autofocus onClick={() => dialog.current?.close()}>
            Keep running
          </button>
        </div>
      </dialog>
    </>
  );
}
