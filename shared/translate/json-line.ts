// Parsing one harness stdout line as JSON, bounded in nesting depth (shared/json-depth.ts says why and how
// deep). A line nested deeper than MAX_JSON_DEPTH is handed on as text: it becomes an `unknown` carrying the line
// as a string, and one hostile line costs that line only.
import { MAX_LINE_DEPTH, nestedDeeperThan } from '../json-depth.ts';

export { nestedDeeperThan };
/** Deepest nesting accepted in a parsed line: the engine's bound (shared/json-depth.ts). */
export const MAX_JSON_DEPTH = MAX_LINE_DEPTH;

/**
 * A value of depth D needs at least D opening and D closing brackets, so shorter lines cannot be too deep and
 * skip the walk: on the hot path most records are short (the walk costs about a fifth of JSON.parse on a line).
 */
const MIN_CHARS_TO_EXCEED = 2 * (MAX_JSON_DEPTH + 1);

/**
 * Whether the text holds more opening brackets than `limit` (counting those inside strings too, so it can only
 * over-count): a line with fewer cannot nest deeper, and counting with indexOf costs a third of the walk.
 */
function moreOpeningBracketsThan(text: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++count > limit) return true;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++count > limit) return true;
  return false;
}

/**
 * Parses a line only when it can be a JSON object or array (cheap rejection of plain text), never throws, and
 * returns undefined for text that is not JSON or nests deeper than MAX_JSON_DEPTH.
 */
export function parseJsonLine(text: string): unknown {
  let i = 0;
  while (i < text.length && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
  const c = text.charCodeAt(i);
  if (c !== 0x7b /* { */ && c !== 0x5b /* [ */) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (text.length >= MIN_CHARS_TO_EXCEED && moreOpeningBracketsThan(text, MAX_JSON_DEPTH) && nestedDeeperThan(value, MAX_JSON_DEPTH)) return undefined;
  return value;
}
