// The evaluation page's one plot: pass rate with its interval against mean comparable cost per run, a point per cell
// linked to its Runs. The plot library is a chunk loaded when the first plot mounts (plot-chart.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PlotData } from '../../evaluation-plot.ts';

const loadChart = () => import('./plot-chart.ts');

export function PassRatePlot({ data }: { data: PlotData }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  // Redrawn when the points change (a status update), not on every render.
  const drawn = JSON.stringify(data.points);
  useEffect(() => {
    let cancelled = false;
    loadChart()
      .then(({ passRatePlot }) => {
        const el = box.current;
        if (cancelled || !el) return;
        el.replaceChildren(passRatePlot(data.points, Math.max(320, Math.min(960, el.clientWidth || 640))));
        el.dataset.points = String(data.points.length);
      })
      .catch((error: unknown) => !cancelled && setFailed(error instanceof Error ? error.message : String(error)));
    return () => {
      cancelled = true;
    };
  }, [drawn]);
  return (
    <figure class="pass-rate-plot">
      <figcaption>
        Pass rate (Wilson 95% interval) against mean comparable cost per run; a point per cell, each links to its Runs.
        {data.notPlotted.length > 0 && <span class="muted"> Not plotted: {data.notPlotted.join('; ')}.</span>}
      </figcaption>
      {failed ? <p class="error">The plot could not be drawn: {failed}</p> : <div ref={box} class="plot-box" />}
    </figure>
  );
}
