// A verify/recording scenario: a prompt, the stub model's script, files the CLI needs in its HOME (skills), and
// what a correct translation must show. Lives in harnesses/<slug>/scenarios/<name>.json.
import { z } from 'zod';
import { StubScript } from './stub-script.ts';
import { HARNESS_EVENT_TYPES } from './events.ts';
import { OUTCOMES } from './run.ts';

const eventType = z.enum(HARNESS_EVENT_TYPES as [string, ...string[]]);

export const Scenario = z.strictObject({
  description: z.string().min(1),
  prompt: z.string().min(1).default('do the thing'),
  model: z.string().min(1).optional().describe('Defaults to the harness verify model'),
  /** `{workdir}` and `{home}` in the script are replaced with the run's paths. */
  script: StubScript,
  home_files: z.record(z.string(), z.string()).default({}),
  expect: z.strictObject({
    outcome: z.enum(OUTCOMES).default('succeeded'),
    /** Each listed type must appear at least this many times. */
    events: z.partialRecord(eventType, z.int().min(1)).default({}),
    /** Optional fields an event type must fill at least once (drift shows up as "never filled"). */
    fields: z.partialRecord(eventType, z.array(z.string())).default({}),
    /** `unknown` events allowed (0 for documented records). */
    max_unknown: z.int().min(0).default(0),
    usage: z.boolean().default(true).describe('The run must report usage'),
    session_id: z.boolean().default(true).describe('The run must report a session id (false for a CLI that has none, e.g. aider)'),
  }),
});
export type Scenario = z.infer<typeof Scenario>;
