// What the console bench installs in the page before its own scripts run (page.addInitScript): a MutationObserver
// that stamps, with the page's clock, the moment each `[data-seq]` element enters the DOM (and the animation frame
// after it, i.e. the frame that paints it), and the moment body.dataset.consoleReady turns "true". It is page
// JavaScript, hence a string: the repo's TypeScript has no DOM types outside console/web.
//
// Clocks: performance.timeOrigin + performance.now() in the page and in Node are both wall-clock based on the
// same machine, so an event's publish time (carried in the event's text) and its render time compare directly.

export const PROBE_SCRIPT = String.raw`(() => {
  const now = () => performance.timeOrigin + performance.now();
  const probe = { readyAt: undefined, seen: [] };
  window.__tcabProbe = probe;
  const first = new Set();
  const stamp = (el, domAt, frameBatch) => {
    const seq = Number(el.dataset.seq);
    if (!Number.isFinite(seq) || first.has(seq)) return;
    first.add(seq);
    const m = /published_at=([0-9.]+)/.exec(el.textContent || '');
    const row = { seq, domAt, frameAt: undefined, publishedAt: m ? Number(m[1]) : undefined };
    probe.seen.push(row);
    frameBatch.push(row);
  };
  const observer = new MutationObserver((mutations) => {
    const domAt = now();
    const batch = [];
    for (const m of mutations) {
      if (m.type === 'attributes') {
        if (m.attributeName === 'data-console-ready' && probe.readyAt === undefined && document.body && document.body.dataset.consoleReady === 'true') probe.readyAt = performance.now();
        else if (m.attributeName === 'data-seq') stamp(m.target, domAt, batch);
        continue;
      }
      for (const node of m.addedNodes) {
        if (node.nodeType !== 1) continue;
        if (node.matches('[data-seq]')) stamp(node, domAt, batch);
        for (const el of node.querySelectorAll('[data-seq]')) stamp(el, domAt, batch);
      }
    }
    if (batch.length) requestAnimationFrame(() => {
      const frameAt = now();
      for (const row of batch) row.frameAt = frameAt;
    });
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-console-ready', 'data-seq'] });
})();`;

export interface ProbeRow {
  seq: number;
  domAt: number;
  frameAt?: number;
  publishedAt?: number;
}

export interface ProbeState {
  /** performance.now() (ms since navigation start) when the page first said it was ready. */
  readyAt?: number;
  seen: ProbeRow[];
}

export const READ_PROBE = '(() => { const p = window.__tcabProbe; return { readyAt: p.readyAt, seen: p.seen.splice(0) }; })()';

export function percentiles(samples: number[]): { p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1) : NaN);
  return { p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: sorted.length ? +sorted[sorted.length - 1]!.toFixed(1) : NaN, n: sorted.length };
}

/**
 * Latency of each published event to the first moment the page showed it or an event after it. A virtualised feed
 * following its tail at 1,000 events/s may scroll past an event between two frames, so it never gets an element of
 * its own; it was still delivered and the feed had moved beyond it.
 */
export function reachedLatencies(published: Map<number, number>, seen: ProbeRow[], at: (row: ProbeRow) => number | undefined): number[] {
  const rows = seen.filter((r) => at(r) !== undefined).sort((a, b) => at(a)! - at(b)!);
  const seqs = [...published.keys()].sort((a, b) => a - b);
  const out: number[] = [];
  let maxSeq = 0;
  let j = 0;
  for (const row of rows) {
    maxSeq = Math.max(maxSeq, row.seq);
    while (j < seqs.length && seqs[j]! <= maxSeq) {
      out.push(at(row)! - published.get(seqs[j]!)!);
      j += 1;
    }
  }
  return out;
}
