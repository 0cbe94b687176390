// Named errors: callers branch on the class (or `code`), never on message text. Each keeps its `cause`.

export class TcabError extends Error {
  override name = 'TcabError';
}

/** A configuration or input value is invalid; `field` names it the way the user wrote it. */
export class InvalidInputError extends TcabError {
  override name = 'InvalidInputError';
  readonly field: string;
  constructor(field: string, message: string, options?: ErrorOptions) {
    super(`${field}: ${message}`, options);
    this.field = field;
  }
}

/** A harness manifest (harness.toml) failed to load or validate; the message names the file and field. */
export class ManifestError extends TcabError {
  override name = 'ManifestError';
  readonly file: string;
  constructor(file: string, message: string, options?: ErrorOptions) {
    super(`${file}: ${message}`, options);
    this.file = file;
  }
}

export class UnknownHarnessError extends TcabError {
  override name = 'UnknownHarnessError';
  readonly slug: string;
  readonly known: readonly string[];
  constructor(slug: string, known: readonly string[]) {
    super(`unknown harness "${slug}" (known: ${known.join(', ')})`);
    this.slug = slug;
    this.known = known;
  }
}
