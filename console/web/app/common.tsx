// Pieces every page shows: the live channel's state, the server's notice, the ready marker, phase badges.
import { useEffect } from 'preact/hooks';
import type { StreamState } from './sse.ts';

const STATE_TEXT: Record<StreamState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' };

/** The page's live channel state and the server's notice (NATS unreachable, a watch failing), announced politely. */
export function StreamStatus({ state, notice }: { state: StreamState; notice?: string | undefined }) {
  return (
    <div class="stream-status">
      <span role="status" class={`conn conn-${state}`} data-stream={state}>
        {STATE_TEXT[state]}
      </span>
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
    </div>
  );
}

/** The tab's title names the page (WCAG 2.4.2), so a tab strip of runs can be told apart. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · tcab console`;
  }, [title]);
}

/** Marks the page rendered for browser tests and the benchmark (contract: body.dataset.consoleReady). */
export function useConsoleReady(ready: boolean): void {
  useEffect(() => {
    if (ready) document.body.dataset.consoleReady = 'true';
    return () => {
      delete document.body.dataset.consoleReady;
    };
  }, [ready]);
}

/** A phase as a badge: the word always shows (colour is never the only signal). */
export function PhaseBadge({ phase, stalled }: { phase: string; stalled?: boolean }) {
  return (
    <span class={`badge phase-${phase.toLowerCase()}`}>
      {phase}
      {stalled && <span class="badge stalled">stalled</span>}
    </span>
  );
}

export function OutcomeBadge({ outcome }: { outcome: string | undefined }) {
  if (!outcome) return <span class="muted">—</span>;
  return <span class={`badge outcome-${outcome}`}>{outcome.replace(/_/g, ' ')}</span>;
}
