// Every generated file (the zod contracts' schemas and CRDs, the CLI reference from the commands' own help), in one
// list: `npm run generate` writes them, and a test fails when a committed copy drifts from what its source produces now.
import { z } from 'zod';
import { stringify } from 'yaml';
import { HarnessEvent } from '../shared/events.ts';
import { RunResult, RunSpec } from '../shared/run.ts';
import { RunProgress } from '../shared/run-progress.ts';
import { CRDS } from '../deploy/crds.ts';
import { EvaluationSpec } from '../shared/evaluation/schema.ts';
import { ChartValues } from '../shared/chart-values.ts';
import { renderCliReference } from './cli-reference.ts';

export interface GeneratedFile {
  /** Path relative to the repository root. */
  path: string;
  render(): string;
}

function jsonSchema(schema: z.ZodType, id: string, title: string, io: 'input' | 'output' = 'output'): string {
  const doc = z.toJSONSchema(schema, { target: 'draft-2020-12', io });
  return `${JSON.stringify({ $id: id, title, ...doc }, null, 2)}\n`;
}

export const GENERATED_FILES: GeneratedFile[] = [
  {
    path: 'deploy/schema/harness-event.schema.json',
    render: () => jsonSchema(HarnessEvent, 'https://tcab.dev/schema/harness-event.schema.json', 'Normalized harness event'),
  },
  {
    path: 'deploy/schema/run-spec.schema.json',
    render: () => jsonSchema(RunSpec, 'https://tcab.dev/schema/run-spec.schema.json', 'Run spec', 'input'),
  },
  {
    path: 'deploy/schema/run-result.schema.json',
    render: () => jsonSchema(RunResult, 'https://tcab.dev/schema/run-result.schema.json', 'Run result'),
  },
  {
    path: 'deploy/schema/run-progress.schema.json',
    render: () => jsonSchema(RunProgress, 'https://tcab.dev/schema/run-progress.schema.json', 'Run progress'),
  },
  {
    path: 'deploy/schema/evaluation-spec.schema.json',
    render: () => jsonSchema(EvaluationSpec, 'https://tcab.dev/schema/evaluation-spec.schema.json', 'Evaluation spec', 'input'),
  },
  {
    path: 'charts/tcab/values.schema.json',
    render: () => `${JSON.stringify(z.toJSONSchema(ChartValues, { target: 'draft-07', io: 'input' }), null, 2)}\n`,
  },
  // The same CRDs twice: deploy/crds for `kubectl apply`, the chart's crds/ for `helm install`.
  ...['deploy/crds', 'charts/tcab/crds'].flatMap((dir) =>
    Object.entries(CRDS).map(([file, build]) => ({
      path: `${dir}/${file}`,
      render: () => `# Generated from the zod schemas in shared/ by \`npm run generate\`: do not edit.\n${stringify(build(), { lineWidth: 0 })}`,
    })),
  ),
  // The CLI reference: every command's own --help (cli-reference.ts), so the page cannot drift from it.
  { path: 'docs/cli.md', render: renderCliReference },
];
