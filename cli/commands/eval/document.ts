// An evaluation file: YAML or JSON, either an Evaluation object as `kubectl apply` takes it (apiVersion, kind,
// metadata.name, spec) or a bare spec, named then after the file. One reader for `tcab eval run`, `tcab eval apply`
// and their tests. Its test cases are inline, or in a directory or a directory of a git repository (read here,
// sources.ts); spec.testCasesFrom naming a ConfigMap is refused by `tcab eval run` (a ConfigMap is read on a cluster).
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InvalidInputError } from '../../../shared/errors.ts';
import { formatIssues } from '../../../shared/zod-issues.ts';
import { EvaluationSpec } from '../../../shared/evaluation/schema.ts';
import type { ResolvedEvaluationSpec } from '../../../shared/evaluation/schema.ts';
import { resolveEvaluationSpec, sourceField } from '../../../shared/evaluation/test-case-sources.ts';
import { readLocalSources } from './sources.ts';
import type { ReadSource, SourceProvenance } from './sources.ts';

/** The name an Evaluation gets (it prefixes its Runs' names): a DNS subdomain, as Kubernetes names objects. */
const EVALUATION_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** An evaluation with every test case at hand: what `tcab eval run` runs and its results directory stores. */
export interface EvaluationDocument {
  name: string;
  spec: ResolvedEvaluationSpec;
  /** Where the test cases of spec.testCasesFrom were read (a directory, a git commit): none for inline ones. */
  sources?: SourceProvenance[];
}

/** An evaluation file as written: checked, its sources not read yet. */
export interface EvaluationFile {
  file: string;
  name: string;
  /** The spec as written (what `tcab eval apply` sends, its sources rewritten), and parsed. */
  rawSpec: Record<string, unknown>;
  spec: EvaluationSpec;
  /** The namespace, labels and annotations of an Evaluation object's metadata (none for a bare spec). */
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** How problems name the spec's fields: "spec" in an Evaluation object, "" in a bare spec. */
  root: 'spec' | '';
}

const StringMap = z.record(z.string(), z.string());
const Wrapped = z.looseObject({
  kind: z.literal('Evaluation'),
  metadata: z.looseObject({
    name: z.string().regex(EVALUATION_NAME, 'must be a lower case DNS name (letters, digits, "-" and ".")'),
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a namespace name (lower case letters, digits and "-", at most 63 characters)').optional(),
    labels: StringMap.optional(),
    annotations: StringMap.optional(),
  }),
  spec: z.unknown(),
});

/** Reads and checks an evaluation file; every problem is an InvalidInputError naming the file and the field. */
export function readEvaluationFile(file: string): EvaluationFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new InvalidInputError(file, `cannot read it: ${(cause as Error).message}`, { cause });
  }
  return parseEvaluationFile(text, file);
}

export function parseEvaluationFile(text: string, file: string): EvaluationFile {
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (cause) {
    throw new InvalidInputError(file, `not YAML or JSON: ${(cause as Error).message.split('\n')[0]}`, { cause });
  }
  const wrapped = typeof document === 'object' && document !== null && 'kind' in document ? Wrapped.safeParse(document) : undefined;
  if (wrapped && !wrapped.success) throw new InvalidInputError(file, formatIssues(wrapped.error));
  const name = wrapped?.data.metadata.name ?? nameFromFile(file);
  const root = wrapped ? 'spec' : '';
  const raw = wrapped ? wrapped.data.spec : document;
  const spec = EvaluationSpec.safeParse(raw);
  if (!spec.success) throw new InvalidInputError(file, formatIssues(spec.error, root));
  const { namespace, labels, annotations } = wrapped?.data.metadata ?? {};
  return { file, name, rawSpec: raw as Record<string, unknown>, spec: spec.data, root, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
}

/** A problem of the shared resolver (it says "spec.") as this file names the field. */
export const fieldOf = (evaluation: Pick<EvaluationFile, 'root'>, problem: string) => (evaluation.root === 'spec' ? problem : problem.replace(/^spec\./, ''));

/**
 * The evaluation with every test case at hand, for `tcab eval run`: its directory and git sources read (relative
 * paths from the file's directory); a ConfigMap source is refused, naming the field.
 */
export function resolveEvaluationFile(evaluation: EvaluationFile, read: (evaluation: EvaluationFile) => Map<number, ReadSource> = readSourcesOf): EvaluationDocument {
  const { file, spec } = evaluation;
  for (const [i, source] of (spec.testCasesFrom ?? []).entries()) {
    if ('configMap' in source) {
      throw new InvalidInputError(file, fieldOf(evaluation, `${sourceField(source, i)}: a ConfigMap is read on a cluster (tcab eval apply, or kubectl apply, the Evaluation); here, give the test cases inline (testCases), in a directory or in git`));
    }
  }
  const sources = read(evaluation);
  const resolved = resolveEvaluationSpec(spec, () => undefined, new Map([...sources].map(([i, s]) => [i, s.files])));
  if ('problem' in resolved) throw new InvalidInputError(file, fieldOf(evaluation, resolved.problem));
  const provenance = [...sources.values()].map((s) => s.provenance);
  return { name: evaluation.name, spec: resolved.spec, ...(provenance.length > 0 ? { sources: provenance } : {}) };
}

/** The directory and git sources of the file, read from its directory; a problem names the file and the field. */
export function readSourcesOf(evaluation: EvaluationFile): Map<number, ReadSource> {
  try {
    return readLocalSources(evaluation.spec, dirname(resolve(evaluation.file)), evaluation.root);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(evaluation.file, error.message, { cause: error });
    throw error;
  }
}

/** Reads an evaluation file and every test case it names (directories, git): what `tcab eval run FILE` runs. */
export function readEvaluationDocument(file: string): EvaluationDocument {
  return resolveEvaluationFile(readEvaluationFile(file));
}

/** The same from the file's text; `file` names it in problems and is where relative sources start. */
export function parseEvaluationDocument(text: string, file: string): EvaluationDocument {
  return resolveEvaluationFile(parseEvaluationFile(text, file));
}

/** A bare spec's name: the file's, made a DNS name ("My Eval.yaml" -> "my-eval"). */
function nameFromFile(file: string): string {
  const name = basename(file, extname(file)).toLowerCase().replace(/[^a-z0-9.-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '').slice(0, 63);
  return EVALUATION_NAME.test(name) ? name : 'evaluation';
}
