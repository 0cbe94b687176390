// Per-harness mutable knobs (spec: "Per-harness configuration"). The only knob is maximum parallelism: the most
// runs of a harness driven at once, or null for unlimited. Stored as HarnessConfig objects keyed by slug (no
// object = defaults), served at GET /harness-config and changed at POST /harness-config/{slug}.
import { z } from 'zod';

export const HarnessConfigSpec = z
  .strictObject({
    maxParallelism: z.int().min(0).nullable().describe('Most runs of this harness at once; null = unlimited; 0 = paused'),
  })
  .describe('Knobs for one harness, shared by every namespace; the object name is the harness slug');
export type HarnessConfigSpec = z.infer<typeof HarnessConfigSpec>;

export const DEFAULT_HARNESS_CONFIG: HarnessConfigSpec = { maxParallelism: null };
