import { describe, expect, it } from 'vitest';
import { RUN_PHASES } from '../../shared/run-status.ts';
import { countSlots, setGauges } from './gauges.ts';
import { dispatcherMetrics } from './metrics.ts';

describe('gauges', () => {
  it('queued = Pending, occupied = neither Pending nor final, final counts nowhere', () => {
    const runs = RUN_PHASES.map((phase) => ({ harness: 'claude', phase }));
    expect(countSlots(runs)).toEqual({ queued: { claude: 1 }, occupied: { claude: 4 } }); // Dispatched, Starting, Running, Checking
  });

  it('counts per harness, "constructor" included, and the gauges forget harnesses that emptied', async () => {
    const metrics = dispatcherMetrics();
    setGauges(metrics, countSlots([{ harness: 'gone', phase: 'Running' }]));
    setGauges(metrics, countSlots([
      { harness: 'constructor', phase: 'Pending' },
      { harness: 'constructor', phase: 'Pending' },
      { harness: 'codex', phase: 'Running' },
      { harness: 'codex', phase: 'Succeeded' },
    ]));
    const values = async (g: typeof metrics.queueDepth) => Object.fromEntries((await g.get()).values.map((v) => [v.labels.harness, v.value]));
    expect(await values(metrics.queueDepth)).toEqual({ constructor: 2 });
    expect(await values(metrics.occupied)).toEqual({ codex: 1 });
  });
});
