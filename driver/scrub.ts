// Secret scrubbing at the driver's single exit point: every secret value the driver handled (injected keys,
// tokens found in copied credential files, proxy and NATS passwords) is replaced by a marker in every event,
// result and log line before it leaves the process.
//
// Values, not serialized text: `value()` walks a JSON value with an explicit stack (no recursion, so no depth
// can overflow it) and scrubs every string and object key, so a secret made of digits never rewrites JSON syntax.
// A number whose decimal form contains a secret becomes the marker string (the secret never appears, at the
// price of that field's type). Events and the run result stay valid against their schemas: an event this takes out
// of the contract becomes `unknown`; in a result (`result()`), such a typed field is null where the schema allows
// it, with a cost warning naming the field, and otherwise (durations, counts: the driver's own measurements, no
// harness text) keeps its measured value. `raw_usage` is free JSON and is scrubbed like any value.
//
// What is covered, in any string: each secret verbatim, JSON-escaped, percent-encoded (encodeURIComponent),
// and base64 / base64url inside a longer encoded text at any byte alignment, with or without padding.
// Not covered: a secret split across lines, events or output chunks, other transformations (hex, compression,
// case changes, partial copies), and values shorter than MIN_SECRET_LENGTH.

import { HarnessEvent as HarnessEventSchema } from '../shared/events.ts';
import type { HarnessEvent } from '../shared/events.ts';
import { RunResult as RunResultSchema } from '../shared/run.ts';
import type { RunResult } from '../shared/run.ts';

export const SECRET_MARKER = '[tcab:redacted]';
/** Shorter values would redact ordinary words; real keys and tokens are far longer. */
const MIN_SECRET_LENGTH = 8;
/** Characters String(number) can produce: a secret made only of these can hide in a number. */
const NUMERIC_TEXT = /^[0-9.eE+-]+$/;

/**
 * The parts of base64(secret) that do not depend on its neighbours, for each of the three byte alignments the
 * secret can have inside a longer encoded text: encode it behind 0, 1 or 2 filler bytes, drop the characters
 * that mix in filler bits at the start, and the partial group at the end.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const skip = Math.ceil((offset * 8) / 6);
    const whole = Math.floor(((offset + bytes.length) * 8) / 6);
    forms.push(encoded.slice(skip, whole));
  }
  return forms;
}

/** Every form of one secret the scrubber replaces (see the header for what is covered). */
function formsOf(secret: string): string[] {
  const base64 = base64Forms(secret);
  const forms = [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    ...base64,
    ...base64.map((form) => form.replaceAll('+', '-').replaceAll('/', '_')),
  ];
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** One container being scrubbed: its entries are visited in order; `copy` is made at the first change only. */
interface Frame {
  source: Container;
  /** Object keys; undefined for an array. */
  keys: string[] | undefined;
  index: number;
  /** Entries so far once something changed (objects), or the new array. */
  copy: [string, unknown][] | unknown[] | undefined;
  /** The scrubbed value of the child container just finished. */
  child: unknown;
  childDone: boolean;
}

export class SecretScrubber {
  private secrets: string[] = [];
  /** All forms of all secrets, longest first, so a form that contains another is replaced whole. */
  private forms: string[] = [];
  private numericSecrets: string[] = [];

  add(...values: (string | undefined)[]): void {
    for (const value of values) {
      if (!value || value.length < MIN_SECRET_LENGTH || this.secrets.includes(value)) continue;
      this.secrets.push(value);
      if (NUMERIC_TEXT.test(value)) this.numericSecrets.push(value);
      this.forms = [...new Set([...this.forms, ...formsOf(value)])].sort((a, b) => b.length - a.length);
    }
  }

  get size(): number {
    return this.secrets.length;
  }

  /** Scrubs a string (a log line, one string value). */
  text(input: string): string {
    let out = input;
    for (const form of this.forms) if (out.includes(form)) out = out.replaceAll(form, SECRET_MARKER);
    return out;
  }

  /** Scrubs any JSON value; returns the same object when nothing matched (the common, cheap case). */
  value<T>(input: T): T {
    if (this.secrets.length === 0) return input;
    if (!isContainer(input)) return this.leaf(input) as T;
    const stack: Frame[] = [this.frame(input)];
    // Containers being walked: a cycle is left as it is instead of walked forever.
    const open = new Set<object>([input]);
    for (;;) {
      const frame = stack[stack.length - 1]!;
      const length = frame.keys ? frame.keys.length : (frame.source as unknown[]).length;
      if (frame.index === length) {
        stack.pop();
        open.delete(frame.source);
        const result = frame.copy === undefined ? frame.source : frame.keys ? Object.fromEntries(frame.copy as [string, unknown][]) : frame.copy;
        if (stack.length === 0) return result as T;
        const parent = stack[stack.length - 1]!;
        parent.child = result;
        parent.childDone = true;
        continue;
      }
      const key = frame.keys ? frame.keys[frame.index]! : frame.index;
      const original = (frame.source as Record<string | number, unknown>)[key];
      let scrubbed: unknown;
      if (frame.childDone) {
        scrubbed = frame.child;
        frame.child = undefined;
        frame.childDone = false;
      } else if (isContainer(original) && !open.has(original)) {
        open.add(original);
        stack.push(this.frame(original));
        continue;
      } else {
        scrubbed = this.leaf(original);
      }
      const newKey = typeof key === 'string' ? this.text(key) : key;
      if (frame.copy === undefined && (scrubbed !== original || newKey !== key)) frame.copy = this.prefixCopy(frame);
      if (frame.copy !== undefined) {
        if (frame.keys) (frame.copy as [string, unknown][]).push([newKey as string, scrubbed]);
        else (frame.copy as unknown[]).push(scrubbed);
      }
      frame.index += 1;
    }
  }

  /**
   * Scrubs an event. One that scrubbing took out of the contract (a secret inside a number field) is published as
   * an `unknown` carrying the scrubbed record, stamped `now`, so nothing is lost and every event stays valid.
   */
  event(event: HarnessEvent, now: () => string): HarnessEvent {
    const clean = this.value(event);
    if (clean === event || HarnessEventSchema.safeParse(clean).success) return clean;
    return { type: 'unknown', timestamp: now(), raw: clean as Extract<HarnessEvent, { type: 'unknown' }>['raw'] };
  }

  /**
   * Scrubs a run result and keeps it valid against RunResult: a typed field that scrubbing took out of the schema
   * (a token count or cost whose digits hold a secret) is null where the schema allows null, with a cost warning
   * naming it, and otherwise keeps the driver's own value (see the header).
   */
  result(result: RunResult): RunResult {
    const clean = this.value(result);
    if (clean === result) return result;
    const first = RunResultSchema.safeParse(clean);
    if (first.success) return first.data;
    const fixed = structuredClone(clean);
    const paths = first.error.issues.map((issue) => issue.path);
    for (const path of paths) replaceAt(fixed, path, null);
    // Fields the schema does not let be null keep what the driver measured.
    const second = RunResultSchema.safeParse(fixed);
    const keptAsMeasured = second.success ? [] : second.error.issues.map((issue) => issue.path);
    for (const path of keptAsMeasured) replaceAt(fixed, path, valueAt(result, path));
    const nulled = paths.filter((path) => !keptAsMeasured.some((kept) => samePath(kept, path)));
    fixed.cost_warnings.push(...nulled.map((path) => `${path.join('.')}: left out (null): its value contains a secret the driver handled`));
    // Only a key that itself held a secret can leave this invalid; the scrubbed value is still published then.
    const final = RunResultSchema.safeParse(fixed);
    return final.success ? final.data : fixed;
  }

  private leaf(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number' && this.numericSecrets.length > 0) {
      const text = String(value);
      if (this.numericSecrets.some((secret) => text.includes(secret))) return this.text(text);
    }
    return value;
  }

  private frame(source: Container): Frame {
    return { source, keys: Array.isArray(source) ? undefined : Object.keys(source), index: 0, copy: undefined, child: undefined, childDone: false };
  }

  /** The entries before the first change, unchanged (a finished child that came back unchanged is the original). */
  private prefixCopy(frame: Frame): [string, unknown][] | unknown[] {
    if (!frame.keys) return (frame.source as unknown[]).slice(0, frame.index);
    const source = frame.source as Record<string, unknown>;
    return frame.keys.slice(0, frame.index).map((key) => [key, source[key]] as [string, unknown]);
  }
}

type Path = readonly PropertyKey[];

const samePath = (a: Path, b: Path) => a.length === b.length && a.every((key, i) => key === b[i]);

function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<PropertyKey, unknown>)[key];
  return node;
}

function replaceAt(root: unknown, path: Path, value: unknown): void {
  if (path.length === 0) return;
  const parent = valueAt(root, path.slice(0, -1)) as Record<PropertyKey, unknown>;
  parent[path[path.length - 1]!] = value;
}
