// Test cases from a directory or a directory of a git repository (spec.testCasesFrom), read by tcab where the
// evaluation file is: `tcab eval run` runs them, `tcab eval apply` puts them in ConfigMaps. The dispatcher never reads
// either (it is privileged: a clone of an arbitrary URL from it would be an egress and a code-input risk).
//
// A directory's test cases are its regular files ending .yaml, .yml or .json, directly in it (no recursion), parsed
// as a ConfigMap's keys are (shared/evaluation/test-case-sources.ts). A symbolic link with such a name is refused,
// never followed (it could lead out of the directory, or out of a cloned repository); every other entry (README.md,
// a subdirectory) is ignored. A file holds at most 1 MiB of UTF-8 text. A git source is cloned into a temporary
// directory (shallow where the ref allows it), its `path` read, the commit it resolved to recorded, the clone removed.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, mkdtempSync, openSync, readSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { InvalidInputError } from '../../../shared/errors.ts';
import { MAX_TEST_CASES } from '../../../shared/evaluation/schema.ts';
import type { EvaluationSpec, GitSource } from '../../../shared/evaluation/schema.ts';
import { TEST_CASE_KEY } from '../../../shared/evaluation/test-case-sources.ts';

/** The most one test case file may hold: what a ConfigMap holds in all. */
export const MAX_TEST_CASE_FILE_BYTES = 1024 * 1024;
/** The most the test case files of one source may hold together (a directory on a workstation, before any ConfigMap). */
export const MAX_SOURCE_BYTES = 64 * 1024 * 1024;
/** How long one git command may take (a clone of a large repository over a slow link). */
const GIT_TIMEOUT_MS = 5 * 60_000;

/** Where a source's test cases were read: recorded in the results directory and on the ConfigMap. */
export type SourceProvenance = { index: number; directory: string } | { index: number; git: { url: string; ref?: string; path?: string; commit: string } };

/** One source read: its test case files (name -> text), and where they came from. */
export interface ReadSource {
  files: Record<string, string>;
  provenance: SourceProvenance;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A name as a message quotes it: escaped and cut. */
const quote = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

/**
 * The test case files of `dir` (name -> text); every problem an InvalidInputError naming `field` and the file.
 * Each file is opened without following a link and checked to be a regular file on the descriptor read, so a file
 * swapped for a link (or a FIFO) between the listing and the read is refused too.
 */
export function readTestCaseDirectory(dir: string, field: string): Record<string, string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (cause) {
    throw new InvalidInputError(field, `cannot read the directory ${dir}: ${(cause as Error).message}`, { cause });
  }
  const named = entries.filter((entry) => TEST_CASE_KEY.test(entry.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (named.length > MAX_TEST_CASES) throw new InvalidInputError(field, `${named.length} test case files in ${dir}; at most ${MAX_TEST_CASES}`);
  const files: [string, string][] = [];
  let total = 0;
  for (const entry of named) {
    const where = `file ${quote(entry.name)} in ${dir}`;
    if (entry.isSymbolicLink()) throw new InvalidInputError(field, `${where} is a symbolic link: test cases are regular files in the directory (a link is refused, never followed; copy the file in)`);
    if (!entry.isFile()) throw new InvalidInputError(field, `${where} is not a regular file`);
    const text = readBoundedFile(join(dir, entry.name), field, where);
    total += text.length;
    if (total > MAX_SOURCE_BYTES) throw new InvalidInputError(field, `the test case files in ${dir} hold more than ${MAX_SOURCE_BYTES / 1024 / 1024} MiB together`);
    files.push([entry.name, text]);
  }
  return Object.fromEntries(files);
}

function readBoundedFile(path: string, field: string, where: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new InvalidInputError(field, `${where} is a symbolic link: test cases are regular files in the directory (a link is refused, never followed; copy the file in)`, { cause });
    throw new InvalidInputError(field, `cannot read ${where}: ${(cause as Error).message}`, { cause });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InvalidInputError(field, `${where} is not a regular file`);
    if (stat.size > MAX_TEST_CASE_FILE_BYTES) throw new InvalidInputError(field, `${where} is ${stat.size} bytes; a test case file holds at most ${MAX_TEST_CASE_FILE_BYTES} bytes (1 MiB)`);
    // Read one byte past the cap: a file that grew since fstat is refused, never read without bound.
    const buffer = Buffer.alloc(MAX_TEST_CASE_FILE_BYTES + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_TEST_CASE_FILE_BYTES) throw new InvalidInputError(field, `${where} is over ${MAX_TEST_CASE_FILE_BYTES} bytes; a test case file holds at most 1 MiB`);
    try {
      return utf8.decode(buffer.subarray(0, length));
    } catch (cause) {
      throw new InvalidInputError(field, `${where} is not UTF-8 text`, { cause });
    }
  } finally {
    closeSync(fd);
  }
}

/** The URL as recorded (an annotation, the results directory): without a user name or password in it. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** The last lines of what git said, bounded (a hostile remote could say a lot). */
function gitSaid(error: unknown): string {
  const stderr = (error as { stderr?: string | Buffer }).stderr;
  const text = (typeof stderr === 'string' ? stderr : (stderr?.toString('utf8') ?? '')).trim() || (error as Error).message;
  const lines = text.split('\n').slice(-3).join(' / ');
  return lines.length > 500 ? `${lines.slice(0, 500)}…` : lines;
}

/** Runs git with no prompt for credentials (a credential helper or an SSH agent still answers) and no remote helper. */
function git(args: string[], cwd: string): string {
  return execFileSync('git', ['-c', 'protocol.ext.allow=never', ...args], {
    cwd,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: GIT_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  }).trim();
}

/**
 * Clones `source` into a temporary directory (relative URLs from `baseDir`, the evaluation file's), reads its
 * directory of test cases and removes the clone. A branch or tag is cloned shallow; a commit falls back to a full
 * clone and a checkout of that commit.
 */
export function readGitSource(source: GitSource['git'], baseDir: string, field: string): { files: Record<string, string>; commit: string } {
  const temporary = mkdtempSync(join(tmpdir(), 'tcab-eval-git-'));
  const checkout = join(temporary, 'repo');
  try {
    const { url, ref } = source;
    const clone = (args: string[]) => git(['clone', '--quiet', ...args, '--', url, checkout], baseDir);
    try {
      clone(['--depth', '1', ...(ref ? ['--branch', ref] : [])]);
    } catch (shallow) {
      if (!ref) throw new InvalidInputError(field, `git clone ${quote(redactUrl(url))} failed: ${gitSaid(shallow)}`, { cause: shallow });
      // Not a branch or tag: a commit, which a shallow clone cannot name. The whole history, then that commit.
      rmSync(checkout, { recursive: true, force: true });
      try {
        clone(['--no-checkout']);
      } catch (full) {
        throw new InvalidInputError(field, `git clone ${quote(redactUrl(url))} failed: ${gitSaid(full)}`, { cause: full });
      }
      let commit: string;
      try {
        commit = git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], checkout);
      } catch (cause) {
        throw new InvalidInputError(`${field}.ref`, `${quote(ref)} is no branch, tag or commit of ${quote(redactUrl(url))}`, { cause });
      }
      git(['checkout', '--quiet', '--detach', commit], checkout);
    }
    const commit = git(['rev-parse', 'HEAD'], checkout);
    const root = realpathSync(checkout);
    let dir: string;
    try {
      dir = realpathSync(join(checkout, source.path ?? '.'));
    } catch (cause) {
      throw new InvalidInputError(`${field}.path`, `${quote(source.path ?? '.')} is not in ${quote(redactUrl(url))} at ${commit}`, { cause });
    }
    const inside = relative(root, dir);
    if (inside.startsWith('..') || isAbsolute(inside)) throw new InvalidInputError(`${field}.path`, `${quote(source.path ?? '.')} leads out of the repository (a symbolic link): refused`);
    return { files: readTestCaseDirectory(dir, field), commit };
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}

/**
 * Reads every directory and git source of `spec` (configMap sources are left to the caller), by index, with where
 * each came from. `baseDir`: the evaluation file's directory, which relative paths and URLs start from.
 */
export function readLocalSources(spec: EvaluationSpec, baseDir: string, fieldRoot: 'spec' | '' = 'spec'): Map<number, ReadSource> {
  const read = new Map<number, ReadSource>();
  const prefix = fieldRoot ? `${fieldRoot}.` : '';
  for (const [index, source] of (spec.testCasesFrom ?? []).entries()) {
    if ('configMap' in source) continue;
    if ('directory' in source) {
      const directory = resolve(baseDir, source.directory);
      read.set(index, { files: readTestCaseDirectory(directory, `${prefix}testCasesFrom[${index}].directory`), provenance: { index, directory } });
    } else {
      const field = `${prefix}testCasesFrom[${index}].git`;
      const { files, commit } = readGitSource(source.git, baseDir, field);
      const { url, ref, path } = source.git;
      read.set(index, { files, provenance: { index, git: { url: redactUrl(url), ...(ref ? { ref } : {}), ...(path ? { path } : {}), commit } } });
    }
  }
  return read;
}
