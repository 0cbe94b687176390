// Secret scrubbing at the driver's single exit point: every secret value the driver handled (injected keys,
// tokens found in copied credential files) is replaced by a marker in every event, result and log line before it
// leaves the process. Works on the serialized form so no field, however nested, is missed.

export const SECRET_MARKER = '[tcab:redacted]';
/** Shorter values would redact ordinary words; real keys and tokens are far longer. */
const MIN_SECRET_LENGTH = 8;

export class SecretScrubber {
  private secrets: string[] = [];

  add(...values: (string | undefined)[]): void {
    for (const value of values) {
      if (!value || value.length < MIN_SECRET_LENGTH || this.secrets.includes(value)) continue;
      this.secrets.push(value);
      // Longest first, so a secret that contains another is replaced whole.
      this.secrets.sort((a, b) => b.length - a.length);
    }
  }

  get size(): number {
    return this.secrets.length;
  }

  /** Scrubs a string (a serialized event, a log line). */
  text(input: string): string {
    let out = input;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.replaceAll(secret, SECRET_MARKER);
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.replaceAll(escaped, SECRET_MARKER);
    }
    return out;
  }

  /** Scrubs any JSON value; returns the same object when nothing matched (the common, cheap case). */
  value<T>(input: T): T {
    if (this.secrets.length === 0) return input;
    const json = JSON.stringify(input);
    const clean = this.text(json);
    return clean === json ? input : (JSON.parse(clean) as T);
  }
}
