// Parsing one harness stdout line as JSON, bounded in nesting depth. JSON.parse in V8 is iterative and accepts any
// depth, but everything after it recurses: JSON.stringify (sinks, the NATS payload) overflows its stack near 4,400
// levels and zod's z.json() (the `unknown` event's `raw`, checked on every event and again by NATS readers) near
// 1,500 from a shallow stack. A line nested deeper than MAX_JSON_DEPTH is therefore handed on as text: it becomes
// an `unknown` carrying the line as a string, and one hostile line costs that line only.

/**
 * Deepest nesting of objects/arrays accepted in a parsed line (the line's top level is depth 1). Real harness
 * records nest about ten levels (a tool input inside a content block inside a message); 256 leaves room for deep
 * tool inputs, stays a sixth of the depth at which zod's recursion fails (about 1,500, measured from a shallow
 * stack on Node 24) and a seventeenth of JSON.stringify's (about 4,400), and leaves an event carrying the line
 * (plus any wrapping an adapter adds) well inside the 512 levels `tcab events follow|tail` accept in a message.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * A value of depth D needs at least D opening and D closing brackets, so shorter lines cannot be too deep and
 * skip the walk: on the hot path most records are short (the walk costs about a fifth of JSON.parse on a line).
 */
const MIN_CHARS_TO_EXCEED = 2 * (MAX_JSON_DEPTH + 1);

// One reused explicit stack (values and their depths): no recursion, no allocation per line.
const pending: object[] = [];
const depths: number[] = [];

/** Whether `value` nests objects/arrays deeper than `limit`, measured iteratively (never recursion). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  pending.length = 0;
  depths.length = 0;
  pending.push(value);
  depths.push(1);
  try {
    while (pending.length > 0) {
      const node = pending.pop()!;
      const depth = depths.pop()!;
      if (depth > limit) return true;
      // for-in, not Object.values: no array per object (about twice as fast on parsed records).
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const child: unknown = node[i];
          if (typeof child === 'object' && child !== null) {
            pending.push(child);
            depths.push(depth + 1);
          }
        }
      } else {
        for (const key in node) {
          const child = (node as Record<string, unknown>)[key];
          if (typeof child === 'object' && child !== null) {
            pending.push(child);
            depths.push(depth + 1);
          }
        }
      }
    }
    return false;
  } finally {
    pending.length = 0;
    depths.length = 0;
  }
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
  if (text.length >= MIN_CHARS_TO_EXCEED && nestedDeeperThan(value, MAX_JSON_DEPTH)) return undefined;
  return value;
}
