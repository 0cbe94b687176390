// The nesting bounds for JSON that tcab did not write, and the two iterative walks that enforce them. JSON.parse
// in V8 is iterative and accepts any depth, but everything after it recurses: JSON.stringify (sinks, the NATS
// payload) overflows its stack near 4,400 levels, zod's z.json() (the `unknown` event's `raw`, checked on every
// event and again by NATS readers) near 1,500 from a shallow stack (measured on Node 24). Both walks use an
// explicit stack or a counter, never recursion, so they hold at any depth themselves.
//
// Two limits, one order: the translation engine accepts a harness line nested MAX_LINE_DEPTH deep and publishes
// it inside an event (an adapter may wrap it a few levels: `raw.tool_use.input...`); `tcab events follow|tail`
// accept MAX_MESSAGE_DEPTH in a message. The reader's limit is the larger one so that every event the engine
// lets out stays readable; the engine's is well below the reader's so adapter wrapping never crosses it.

/**
 * Deepest nesting of objects/arrays accepted in a parsed harness line (its top level is depth 1). Real records
 * nest about ten levels (a tool input inside a content block inside a message); 256 leaves room for deep tool
 * inputs and stays a sixth of zod's recursion limit and a seventeenth of JSON.stringify's.
 */
export const MAX_LINE_DEPTH = 256;

/** Deepest nesting accepted in one NATS message by `tcab events follow|tail`: twice an engine line's. */
export const MAX_MESSAGE_DEPTH = 2 * MAX_LINE_DEPTH;

// One reused explicit stack (values and their depths): no recursion, no allocation per call.
const pending: object[] = [];
const depths: number[] = [];

/** Whether a parsed value nests objects/arrays deeper than `limit` (top level = 1), measured iteratively. */
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
 * Whether JSON text nests arrays/objects deeper than `limit`, before anything parses it: one pass over the
 * characters, strings skipped. Agrees with nestedDeeperThan(JSON.parse(text)) on valid JSON.
 */
export function jsonTextNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
