// Narrow readers for untyped harness JSON: each returns undefined instead of guessing, so a field an adapter
// cannot read leads to `unknown` (spec), never to an invented value.
import { posix } from 'node:path';

export type JsonObject = Record<string, unknown>;

export function obj(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}
export function arr(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
export function bool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}
/** Non-negative integer, as line numbers and token counts must be. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** Makes a reported path absolute against the session's cwd when it is relative and the cwd is known. */
export function absolutePath(path: string, cwd: string | undefined): string {
  if (path.startsWith('/') || cwd === undefined || !cwd.startsWith('/')) return path;
  return posix.resolve(cwd, path);
}

/**
 * Drops undefined fields so optional event fields are absent rather than `undefined` on the wire. Builds a copy
 * rather than deleting keys: a deleted key turns the object into a dictionary, and every later read of the event
 * (the contract check, the engine's stamp, each sink's JSON.stringify) then costs about seven times as much.
 */
export function compact<const T extends object>(value: T): T {
  const out = {} as T;
  for (const key in value) if (Object.hasOwn(value, key) && value[key] !== undefined) out[key] = value[key];
  return out;
}

/** Text of a tool result `content`: a string, or the text blocks of an array. */
export function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  const blocks = arr(content);
  if (!blocks) return undefined;
  // A loop, not map/filter/join: adapters ask this of every user record on the hot path, and most have no text.
  let text: string | undefined;
  for (const block of blocks) {
    const piece = str(obj(block)?.text);
    if (piece !== undefined) text = text === undefined ? piece : `${text}\n${piece}`;
  }
  return text;
}
