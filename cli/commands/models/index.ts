// `tcab models list|show|import|reprice`: the model catalogue (shared/catalog/models.json, or a user copy named by
// TCAB_MODEL_CATALOG) and its prices.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { BUNDLED_CATALOG, loadCatalog, parseCatalog } from '../../../shared/catalog/load.ts';
import type { Catalog, CatalogEntry } from '../../../shared/catalog/schema.ts';
import { importPrices } from '../../../shared/catalog/import.ts';
import { priceRun } from '../../../shared/cost.ts';
import { InvalidInputError } from '../../../shared/errors.ts';
import { formatIssues } from '../../../shared/zod-issues.ts';
import { RunResult } from '../../../shared/run.ts';
import { getHarness } from '../../../harnesses/registry.ts';

const catalogPath = () => process.env.TCAB_MODEL_CATALOG || BUNDLED_CATALOG;
const price = (n: number | undefined) => (n === undefined ? '-' : `$${n}`);

function find(catalog: Catalog, idOrAlias: string): CatalogEntry | undefined {
  return catalog.entries.find((e) => e.id === idOrAlias || e.aliases.some((a) => a.id === idOrAlias));
}

/** Reprices stored run results (NDJSON lines or JSON files) with the current catalogue: returns updated results. */
export function repriceResults(results: RunResult[], catalog: Catalog): RunResult[] {
  return results.map((r) => {
    const cost = priceRun({
      model: r.model,
      idFamily: getHarness(r.harness_slug).manifest.model_ids,
      tokens: r.tokens,
      reportedCostUsd: r.reported_cost_usd,
      authMode: r.auth_mode ?? 'api-key',
      catalog,
    });
    return { ...r, canonical_model: cost.canonical_model, comparable_cost_usd: cost.comparable_cost_usd, actual_cost_usd: r.auth_mode === null ? null : cost.actual_cost_usd, catalog_version: cost.catalog_version, cost_warnings: cost.warnings };
  });
}

/** JSON text -> value; a parse error names the file (and line) it came from, so it is the caller's input (exit 2). */
function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new InvalidInputError(where, `not valid JSON: ${(cause as Error).message}`, { cause });
  }
}

function readResults(path: string): RunResult[] {
  const files = statSync(path).isDirectory() ? readdirSync(path).filter((f) => /\.(json|jsonl|ndjson)$/.test(f)).map((f) => join(path, f)) : [path];
  return files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const ndjson = !file.endsWith('.json');
    const lines = ndjson ? text.split('\n') : [text];
    return lines.flatMap((line, i) => {
      if (line.trim() === '') return [];
      const where = ndjson ? `${file}:${i + 1}` : file;
      const parsed = RunResult.safeParse(parseJson(line, where));
      if (!parsed.success) throw new InvalidInputError(where, `not a run result: ${formatIssues(parsed.error, '', { maxIssues: 3 })}`);
      return [parsed.data];
    });
  });
}

export function registerModelsCommands(program: Command): void {
  const models = program.command('models').description('the model catalogue: canonical ids, aliases, list prices');

  models
    .command('list')
    .description('every catalogue entry with its prices (USD per million tokens)')
    .option('--json', 'JSON')
    .action((options: { json?: boolean }) => {
      const catalog = loadCatalog(catalogPath());
      if (options.json) return void process.stdout.write(`${JSON.stringify(catalog.entries, null, 2)}\n`);
      const rows = [['ID', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'ALIASES'], ...catalog.entries.map((e) => [e.id, price(e.prices.input), price(e.prices.output), price(e.prices.cache_read), price(e.prices.cache_write), String(e.aliases.length)])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
      process.stdout.write(`catalogue ${catalog.version} (${catalogPath()})\n`);
    });

  models
    .command('show')
    .description('one entry, by canonical id or any alias')
    .argument('<id>')
    .option('--json', 'JSON')
    .action((id: string, options: { json?: boolean }) => {
      const entry = find(loadCatalog(catalogPath()), id);
      if (!entry) throw new InvalidInputError('id', `"${id}" is neither a canonical id nor an alias in the catalogue`);
      if (options.json) return void process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
      process.stdout.write(
        [
          `${entry.id} — ${entry.name}`,
          `  prices (USD / 1M tokens): input ${price(entry.prices.input)}, output ${price(entry.prices.output)}, cache read ${price(entry.prices.cache_read)}, cache write ${price(entry.prices.cache_write)}`,
          `  aliases: ${entry.aliases.map((a) => `${a.id} (${a.family})`).join(', ') || 'none'}`,
          `  source: ${entry.source.name}, ${entry.source.url}, retrieved ${entry.source.retrieved}`,
        ].join('\n') + '\n',
      );
    });

  models
    .command('import')
    .description("refresh prices from a saved OpenRouter /models JSON or LiteLLM price file")
    .argument('<file>')
    .option('--out <file>', 'where to write the updated catalogue (default: TCAB_MODEL_CATALOG)')
    .option('--json', 'print the change report as JSON')
    .action((file: string, options: { out?: string; json?: boolean }) => {
      const out = options.out ?? process.env.TCAB_MODEL_CATALOG;
      if (!out) throw new InvalidInputError('--out', 'give --out FILE or set TCAB_MODEL_CATALOG (the bundled catalogue is not overwritten implicitly)');
      const today = new Date().toISOString().slice(0, 10);
      const current = loadCatalog(catalogPath());
      let result: ReturnType<typeof importPrices>;
      try {
        result = importPrices(current, parseJson(readFileSync(file, 'utf8'), file), today, `${today}.import`);
      } catch (error) {
        if (error instanceof InvalidInputError) throw error;
        throw new InvalidInputError(file, (error as Error).message, { cause: error });
      }
      writeFileSync(out, `${JSON.stringify(parseCatalog(result.catalog), null, 2)}\n`);
      if (options.json) return void process.stdout.write(`${JSON.stringify({ ...result, catalog: undefined, out }, null, 2)}\n`);
      process.stdout.write(`${result.format} price list: ${result.changes.length} changed, ${result.unchanged} unchanged, ${result.unmatched.length} not in the catalogue; wrote ${out}\n`);
      for (const c of result.changes) process.stdout.write(`  ${c.id}: input ${price(c.from.input)} -> ${price(c.to.input)}, output ${price(c.from.output)} -> ${price(c.to.output)}\n`);
    });

  models
    .command('reprice')
    .description('recompute comparable and actual costs of stored run results with the current catalogue')
    .argument('<results>', 'a run result JSON file, an NDJSON file of results, or a directory of them')
    .action((path: string) => {
      for (const r of repriceResults(readResults(path), loadCatalog(catalogPath()))) process.stdout.write(`${JSON.stringify(r)}\n`);
    });
}
