// Harnesses: per harness its cap, slots occupied, queued Runs, readiness, where its API key goes (the model gateway or
// key in harness) and last installed version, live; the cap can be changed here (bearer token; the dispatcher
// enforces it at the next claim).
import { signal, useSignal } from '@preact/signals';
import { useMemo } from 'preact/hooks';
import type { z } from 'zod';
import type { HARNESS_MESSAGES, HarnessRow } from '../../../../shared/console.ts';
import { atCap, harnessRowData, holdLabel, keyLabel, readinessLabel } from '../../harness-view.ts';
import { PATHS } from '../../wire.ts';
import { postWithToken, WriteError } from '../auth.tsx';
import { serverNow, syncServerTime } from '../clock.ts';
import { StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { useEventStream } from '../sse.ts';

type Data<K extends keyof typeof HARNESS_MESSAGES> = z.infer<(typeof HARNESS_MESSAGES)[K]>;

export function HarnessesPage() {
  const store = useMemo(() => {
    const rows = signal(new Map<string, HarnessRow>());
    const ready = signal(false);
    const notice = signal<string | undefined>(undefined);
    const handlers = {
      snapshot: (data: Data<'snapshot'>) => {
        syncServerTime(data.serverTime);
        rows.value = new Map(data.rows.map((r) => [r.slug, r]));
        ready.value = true;
      },
      upsert: (data: Data<'upsert'>) => {
        const next = new Map(rows.value);
        for (const r of data.rows) next.set(r.slug, r);
        rows.value = next;
      },
      notice: (data: Data<'notice'>) => (notice.value = data.text || undefined),
    };
    return { rows, ready, notice, handlers };
  }, []);
  const state = useEventStream(PATHS.harnessesStream, store.handlers);
  useConsoleReady(store.ready.value);
  useTitle('Harnesses');
  const rows = [...store.rows.value.values()].sort((a, b) => b.occupied + b.queued - (a.occupied + a.queued) || a.slug.localeCompare(b.slug));
  return (
    <section aria-labelledby="harnesses-title">
      <div class="page-head">
        <h1 id="harnesses-title">Harnesses</h1>
        <StreamStatus state={state.value} notice={store.notice.value} />
      </div>
      <p class="muted">Busiest first. A cap of 0 pauses a harness; leave the cap empty for unlimited. Changing it needs the API token.</p>
      <div class="table-scroll">
        <table class="harnesses">
          <thead>
            <tr>
              <th scope="col">Harness</th>
              <th scope="col">Cap</th>
              <th scope="col">Occupied</th>
              <th scope="col">Queued</th>
              <th scope="col">Readiness</th>
              <th scope="col" title="Where the API key goes in api-key mode: through the model gateway (the harness gets a per-run token), or into the harness's environment">
                Key
              </th>
              <th scope="col" title="Provider+models the model gateway reports throttled (429/529/overloaded): their queued Runs are held, other models' Runs keep starting">
                Back-pressure
              </th>
              <th scope="col">Last installed version</th>
              <th scope="col">Change cap</th>
            </tr>
          </thead>
          <tbody>
            {!store.ready.value && (
              <tr>
                <td colSpan={9} class="muted">
                  Loading harnesses…
                </td>
              </tr>
            )}
            {rows.map((h) => (
              <HarnessLine key={h.slug} h={h} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const capText = (cap: number | null) => (cap === null ? 'unlimited' : cap === 0 ? '0 (paused)' : String(cap));

function HarnessLine({ h }: { h: HarnessRow }) {
  const full = atCap(h);
  const readiness = readinessLabel(h.readiness);
  const key = keyLabel(h.key);
  return (
    <tr {...harnessRowData(h)}>
      <th scope="row">
        {h.displayName ?? h.slug}
        {h.displayName && <span class="muted small"> {h.slug}</span>}
      </th>
      <td>
        {capText(h.maxParallelism)}
        {h.default && <span class="muted small"> (default)</span>}
      </td>
      <td class={full ? 'at-cap' : undefined}>
        <a href={`/runs?phase=active&harness=${encodeURIComponent(h.slug)}`} aria-label={`${h.occupied} runs of ${h.slug} not finished: show them`}>
          {h.occupied}
        </a>
        {h.maxParallelism !== null && ` / ${h.maxParallelism}`}
        {full && <span class="badge at-cap-badge">at cap</span>}
      </td>
      <td>
        <a href={`/runs?phase=Pending&harness=${encodeURIComponent(h.slug)}`} aria-label={`${h.queued} runs of ${h.slug} queued: show them`}>
          {h.queued}
        </a>
      </td>
      <td>
        <span class={readiness.tone === 'ok' ? 'ok-text' : readiness.tone === 'fail' ? 'fail-text' : 'muted'} data-readiness={readiness.tone}>
          {readiness.text}
        </span>
      </td>
      <td title={key.title}>
        {key.route === 'gateway' ? key.text : <span class="muted">{key.text}</span>}
      </td>
      <td>
        {h.holds && h.holds.length > 0 ? (
          h.holds.map((hold) => {
            const label = holdLabel(hold, serverNow.value);
            return (
              <div key={`${hold.provider}/${hold.model ?? '*'}`} class="fail-text small" title={label.title}>
                {label.text}
              </div>
            );
          })
        ) : (
          <span class="muted">—</span>
        )}
      </td>
      <td>{h.lastInstalledVersion ?? <span class="muted">—</span>}</td>
      <td>
        <CapForm h={h} />
      </td>
    </tr>
  );
}

function CapForm({ h }: { h: HarnessRow }) {
  const value = useSignal(h.maxParallelism === null ? '' : String(h.maxParallelism));
  const state = useSignal<{ busy: boolean; error?: string; saved?: string }>({ busy: false });
  const id = `cap-${h.slug}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    const text = value.value.trim();
    const cap = text === '' ? null : Number(text);
    if (cap !== null && (!Number.isInteger(cap) || cap < 0)) {
      state.value = { busy: false, error: 'The cap is a whole number, 0 or more (empty = unlimited).' };
      return;
    }
    state.value = { busy: true };
    try {
      await postWithToken(PATHS.harnessConfig(h.slug), { maxParallelism: cap }, `change the cap of ${h.slug}`);
      state.value = { busy: false, saved: `Saved: ${capText(cap)}` };
    } catch (error) {
      state.value = { busy: false, error: error instanceof WriteError ? error.message : `Saving failed: ${(error as Error).message}` };
    }
  };
  return (
    <form class="cap-form" onSubmit={submit} aria-label={`Cap of ${h.slug}`}>
      <label for={id} class="visually-hidden">
        New cap for {h.slug} (empty for unlimited)
      </label>
      <input id={id} name="maxParallelism" type="number" min={0} step={1} inputMode="numeric" placeholder="unlimited" value={value.value} onInput={(e) => (value.value = e.currentTarget.value)} />
      <button type="submit" disabled={state.value.busy}>
        {state.value.busy ? 'Saving…' : 'Set cap'}
      </button>
      {state.value.saved && (
        <span role="status" class="ok-text small">
          {state.value.saved}
        </span>
      )}
      {state.value.error && (
        <p role="alert" class="error small" data-status={state.value.error.startsWith('401') ? '401' : undefined}>
          {state.value.error}
        </p>
      )}
    </form>
  );
}
