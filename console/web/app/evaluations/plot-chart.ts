// The pass rate / cost plot, drawn with Observable Plot (SVG). Loaded on demand (a chunk of its own: the runs page
// never pays for the library): it imports nothing of the app but types.
import * as Plot from '@observablehq/plot';
import type { PlotPoint } from '../../evaluation-plot.ts';

const usd = (v: number) => (v === 0 ? '$0' : v < 0.01 ? `$${v.toPrecision(1)}` : `$${v.toFixed(2)}`);

/** A point per cell at (mean comparable cost per run, pass rate), its Wilson interval as a vertical rule. */
export function passRatePlot(points: readonly PlotPoint[], width: number): SVGSVGElement | HTMLElement {
  const title = (p: PlotPoint) => `${p.label}\npass rate ${Math.round(p.passRate * 100)}% [${Math.round(p.low * 100)}–${Math.round(p.high * 100)}]\n${usd(p.cost)} per run`;
  return Plot.plot({
    width,
    height: 360,
    marginRight: 120,
    marginBottom: 40,
    ariaLabel: 'Pass rate against mean comparable cost per run, one point per cell',
    style: { background: 'transparent', color: 'currentColor', fontSize: '12px' },
    x: { label: 'Mean comparable cost per run (USD) →', zero: true, grid: true, nice: true, tickFormat: usd },
    // percent: the data (0..1) is shown in points, so the domain is in points too.
    y: { label: '↑ Pass rate (%)', domain: [0, 100], percent: true, grid: true },
    color: { type: 'categorical' },
    marks: [
      Plot.ruleY([0, 1], { className: 'bounds', strokeOpacity: 0.4 }),
      Plot.ruleX(points, { x: 'cost', y1: 'low', y2: 'high', stroke: 'harness', strokeWidth: 2, strokeOpacity: 0.6, className: 'interval' }),
      Plot.dot(points, { x: 'cost', y: 'passRate', r: 5, fill: 'harness', stroke: 'var(--bg)', href: 'href', title }),
      Plot.text(points, { x: 'cost', y: 'passRate', text: 'label', dx: 9, textAnchor: 'start', fill: 'currentColor' }),
    ],
  });
}
