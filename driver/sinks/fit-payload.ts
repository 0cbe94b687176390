// Keeps a message under the server's max payload: the longest string fields are cut, each with an explicit
// marker naming its original size, until the serialized message fits. Pure.

const marker = (bytes: number) => `…[tcab: truncated, original ${bytes} bytes]`;

interface StringSlot {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  value: string;
}

function collectStrings(value: unknown, out: StringSlot[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => (typeof item === 'string' ? out.push({ holder: value, key: i, value: item }) : collectStrings(item, out)));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string') out.push({ holder: value as Record<string, unknown>, key, value: item });
      else collectStrings(item, out);
    }
  }
}

/** Returns the JSON text of `value`, cut to at most `maxBytes` bytes (or as close as its structure allows). */
export function fitJson(value: unknown, maxBytes: number): { json: string; truncated: boolean } {
  return fitJsonText(JSON.stringify(value), maxBytes);
}

/**
 * The same for JSON text already serialized (the driver's sink serializes each event once): text that fits is
 * returned as is, without being parsed; only an oversized one is parsed and cut.
 */
export function fitJsonText(text: string, maxBytes: number): { json: string; truncated: boolean } {
  let json = text;
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most messages fit without counting their bytes.
  if (json.length * 3 <= maxBytes || Buffer.byteLength(json) <= maxBytes) return { json, truncated: false };
  const copy = JSON.parse(json) as unknown;
  const slots: StringSlot[] = [];
  collectStrings(copy, slots);
  slots.sort((a, b) => b.value.length - a.value.length);
  for (const slot of slots) {
    const over = Buffer.byteLength(json) - maxBytes;
    if (over <= 0) break;
    const original = Buffer.byteLength(slot.value);
    // Cut a bit more than the overflow: the marker and JSON escaping take room too.
    const keep = Math.max(0, slot.value.length - over - 64 - Math.ceil(slot.value.length * 0.01));
    const cut = slot.value.slice(0, keep) + marker(original);
    (slot.holder as Record<string | number, unknown>)[slot.key] = cut;
    json = JSON.stringify(copy);
  }
  return { json, truncated: true };
}
