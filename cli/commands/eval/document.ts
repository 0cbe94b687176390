// An evaluation file: YAML or JSON, either an Evaluation object as `kubectl apply` takes it (apiVersion, kind,
// metadata.name, spec) or a bare spec, named then after the file. One reader for `tcab eval run` and its tests.
// Its test cases are inline: spec.testCasesFrom (ConfigMaps) is refused, a ConfigMap is read on a cluster.
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InvalidInputError } from '../../../shared/errors.ts';
import { formatIssues } from '../../../shared/zod-issues.ts';
import { InlineEvaluationSpec } from '../../../shared/evaluation/schema.ts';
import type { ResolvedEvaluationSpec } from '../../../shared/evaluation/schema.ts';

/** The name an Evaluation gets (it prefixes its Runs' names): a DNS subdomain, as Kubernetes names objects. */
const EVALUATION_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface EvaluationDocument {
  name: string;
  spec: ResolvedEvaluationSpec;
}

const Wrapped = z.looseObject({
  kind: z.literal('Evaluation'),
  metadata: z.looseObject({ name: z.string().regex(EVALUATION_NAME, 'must be a lower case DNS name (letters, digits, "-" and ".")') }),
  spec: z.unknown(),
});

/** Reads and checks an evaluation file; every problem is an InvalidInputError naming the file and the field. */
export function readEvaluationDocument(file: string): EvaluationDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new InvalidInputError(file, `cannot read it: ${(cause as Error).message}`, { cause });
  }
  return parseEvaluationDocument(text, file);
}

export function parseEvaluationDocument(text: string, file: string): EvaluationDocument {
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (cause) {
    throw new InvalidInputError(file, `not YAML or JSON: ${(cause as Error).message.split('\n')[0]}`, { cause });
  }
  const wrapped = typeof document === 'object' && document !== null && 'kind' in document ? Wrapped.safeParse(document) : undefined;
  if (wrapped && !wrapped.success) throw new InvalidInputError(file, formatIssues(wrapped.error));
  const name = wrapped?.data.metadata.name ?? nameFromFile(file);
  const spec = InlineEvaluationSpec.safeParse(wrapped ? wrapped.data.spec : document);
  if (!spec.success) throw new InvalidInputError(file, formatIssues(spec.error, wrapped ? 'spec' : ''));
  return { name, spec: spec.data };
}

/** A bare spec's name: the file's, made a DNS name ("My Eval.yaml" -> "my-eval"). */
function nameFromFile(file: string): string {
  const name = basename(file, extname(file)).toLowerCase().replace(/[^a-z0-9.-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '').slice(0, 63);
  return EVALUATION_NAME.test(name) ? name : 'evaluation';
}
