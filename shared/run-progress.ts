// What a driver says about where its run is, besides events: today only that the test case's check has started.
// The normalized event contract has no stage for it (the spec's stages are fixed), so it is a message of its own,
// on a core NATS subject outside the run stream (nats/envelope.ts progressSubject): never stored, never seen by
// readers of events. The dispatcher turns it into the Run's phase (Checking); `tcab run` prints it. Best effort: a
// lost one leaves the phase at Running until the result.
import { z } from 'zod';
import { RunAttemptNumber } from './run.ts';

export const RunProgress = z
  .strictObject({
    phase: z.literal('Checking').describe("The test case's check runs: the agent's sessions are over and its processes gone"),
    at: z.iso.datetime({ offset: true }).describe('When the phase began (RFC 3339)'),
    attempt: RunAttemptNumber.optional().describe('Which attempt of a cluster Run this is (a workstation run has none)'),
    /** Bounded: a command is a line for a person, not a script to print whole. */
    command: z.string().max(200).optional().describe("The check's command, cut at 200 characters"),
  })
  .describe('Where a run is, between its events');
export type RunProgress = z.infer<typeof RunProgress>;
