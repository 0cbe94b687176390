// Every file generated from the zod contracts, in one list: `npm run generate` writes them, and a test fails when
// a committed copy drifts from what the schemas produce now.
import { z } from 'zod';
import { HarnessEvent } from './events.ts';

export interface GeneratedFile {
  /** Path relative to the repository root. */
  path: string;
  render(): string;
}

function jsonSchema(schema: z.ZodType, id: string, title: string): string {
  const doc = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' });
  return `${JSON.stringify({ $id: id, title, ...doc }, null, 2)}\n`;
}

export const GENERATED_FILES: GeneratedFile[] = [
  {
    path: 'deploy/schema/harness-event.schema.json',
    render: () => jsonSchema(HarnessEvent, 'https://tcab.dev/schema/harness-event.schema.json', 'Normalized harness event'),
  },
];
