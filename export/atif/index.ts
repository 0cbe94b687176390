// The ATIF export's API: the converter, its input types, and the schema its output satisfies.
export { toAtif, atifSpecOfRun, ATIF_NOTES } from './convert.ts';
export type { AtifInput, AtifSpec, AtifUsage } from './convert.ts';
export { AtifTrajectory, ATIF_SCHEMA_VERSION, HARBOR_VERSION } from './schema.ts';
