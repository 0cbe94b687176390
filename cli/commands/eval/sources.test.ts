// Test cases from a directory and from git, read by tcab (never by the dispatcher): only regular test case files
// directly in the directory, each at most 1 MiB of UTF-8, links refused; a git repository made here, cloned by
// file:// URL and by plain path, at a branch, a tag or a commit, its path kept inside it, the clone removed after.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../shared/errors.ts';
import { MAX_TEST_CASES } from '../../../shared/evaluation/schema.ts';
import { parseEvaluationDocument, parseEvaluationFile, resolveEvaluationFile } from './document.ts';
import { ResultsDir } from './results-dir.ts';
import { MAX_TEST_CASE_FILE_BYTES, readGitSource, readTestCaseDirectory, redactUrl } from './sources.ts';

let sandbox: string;
let repo: string;
let first: string;
let second: string;
const HELLO = 'prompt: Create hello.txt\n';
const BYE = '{"prompt": "Create bye.txt"}';

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

beforeAll(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'tcab-eval-sources-'));
  // The repository: main has cases/hello.yaml (tag v1), then cases/bye.json; a link out of it; a linked test case.
  repo = join(sandbox, 'repo');
  mkdirSync(join(repo, 'cases'), { recursive: true });
  writeFileSync(join(repo, 'cases', 'hello.yaml'), HELLO);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'hello');
  git(repo, 'tag', 'v1');
  first = git(repo, 'rev-parse', 'HEAD');
  writeFileSync(join(repo, 'cases', 'bye.json'), BYE);
  symlinkSync('/etc', join(repo, 'out'));
  mkdirSync(join(repo, 'linked'));
  symlinkSync('../cases/hello.yaml', join(repo, 'linked', 'hello.yaml'));
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'bye');
  second = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'checkout', '--quiet', '-b', 'feature');
  writeFileSync(join(repo, 'cases', 'feature.yml'), 'prompt: feature\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'feature');
  git(repo, 'checkout', '--quiet', 'main');
});
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

/** A fresh directory per test. */
let dir: string;
let n = 0;
beforeEach(() => {
  dir = join(sandbox, `dir-${n++}`);
  mkdirSync(dir);
});

const refusal = (read: () => unknown) => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('readTestCaseDirectory', () => {
  it('reads the regular files ending .yaml, .yml or .json directly in it; ignores the rest (a subdirectory, README.md)', () => {
    writeFileSync(join(dir, 'hello.yaml'), HELLO);
    writeFileSync(join(dir, 'bye.json'), BYE);
    writeFileSync(join(dir, 'README.md'), '# notes');
    mkdirSync(join(dir, 'nested'));
    writeFileSync(join(dir, 'nested', 'deep.yaml'), HELLO);
    expect(readTestCaseDirectory(dir, 'spec.testCasesFrom[0].directory')).toEqual({ 'bye.json': BYE, 'hello.yaml': HELLO });
  });

  it.each<[string, (d: string) => void, RegExp]>([
    ['a symbolic link out of the directory', (d) => symlinkSync('/etc/hostname', join(d, 'evil.yaml')), /^spec\.testCasesFrom\[0\]\.directory: file "evil\.yaml" in .* is a symbolic link: test cases are regular files in the directory \(a link is refused, never followed/],
    ['a symbolic link inside it', (d) => (writeFileSync(join(d, 'a.txt'), HELLO), symlinkSync('a.txt', join(d, 'a.yaml'))), /file "a\.yaml" in .* is a symbolic link/],
    ['a dangling link', (d) => symlinkSync(join(d, 'nowhere'), join(d, 'gone.yaml')), /file "gone\.yaml" in .* is a symbolic link/],
    ['a directory with a test case name', (d) => mkdirSync(join(d, 'cases.yaml')), /file "cases\.yaml" in .* is not a regular file/],
    ['a FIFO (never opened: it would block)', (d) => execFileSync('mkfifo', [join(d, 'pipe.yaml')]), /file "pipe\.yaml" in .* is not a regular file/],
    ['a file over 1 MiB', (d) => writeFileSync(join(d, 'huge.yaml'), Buffer.alloc(MAX_TEST_CASE_FILE_BYTES + 1, 0x61)), /file "huge\.yaml" in .* is 1048577 bytes; a test case file holds at most 1048576 bytes \(1 MiB\)/],
    ['a file that is not UTF-8', (d) => writeFileSync(join(d, 'latin1.yaml'), Buffer.from([0x70, 0x72, 0x6f, 0x6d, 0x70, 0x74, 0x3a, 0x20, 0xe9, 0xff])), /file "latin1\.yaml" in .* is not UTF-8 text/],
  ])('refuses %s, naming the field and the file', (_, make, message) => {
    writeFileSync(join(dir, 'fine.yaml'), HELLO);
    make(dir);
    expect(refusal(() => readTestCaseDirectory(dir, 'spec.testCasesFrom[0].directory'))).toMatch(message);
  });

  it('a file of exactly 1 MiB is read', () => {
    writeFileSync(join(dir, 'big.yaml'), Buffer.alloc(MAX_TEST_CASE_FILE_BYTES, 0x61));
    expect(readTestCaseDirectory(dir, 'f')['big.yaml']).toHaveLength(MAX_TEST_CASE_FILE_BYTES);
  });

  it('refuses a missing directory, a file for a directory, and more test case files than an evaluation takes', () => {
    expect(refusal(() => readTestCaseDirectory(join(dir, 'missing'), 'testCasesFrom[1].directory'))).toMatch(/^testCasesFrom\[1\]\.directory: cannot read the directory .*missing: ENOENT/);
    writeFileSync(join(dir, 'plain'), '');
    expect(refusal(() => readTestCaseDirectory(join(dir, 'plain'), 'd'))).toMatch(/^d: cannot read the directory .*plain: ENOTDIR/);
    for (let i = 0; i <= MAX_TEST_CASES; i++) writeFileSync(join(dir, `t${i}.yaml`), '');
    expect(refusal(() => readTestCaseDirectory(dir, 'd'))).toBe(`d: ${MAX_TEST_CASES + 1} test case files in ${dir}; at most ${MAX_TEST_CASES}`);
  });
});

describe('readGitSource', () => {
  // Every clone goes to a temporary directory under TMPDIR: pointed here, what is left after is seen.
  let clones: string;
  let tmpBefore: string | undefined;
  beforeEach(() => {
    clones = join(dir, 'tmp');
    mkdirSync(clones);
    tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = clones;
  });
  afterEach(() => {
    if (tmpBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpBefore;
    expect(readdirSync(clones)).toEqual([]); // the clone is removed, read or refused
  });

  it('clones by file:// URL (the remote HEAD), reads path, records the commit', () => {
    expect(readGitSource({ url: `file://${repo}`, path: 'cases' }, sandbox, 'git')).toEqual({ files: { 'bye.json': BYE, 'hello.yaml': HELLO }, commit: second });
  });

  it.each([
    ['a branch', 'feature', ['bye.json', 'feature.yml', 'hello.yaml']],
    ['a tag', 'v1', ['hello.yaml']],
    ['a commit', 'FIRST', ['hello.yaml']],
    ['an abbreviated commit', 'FIRST7', ['hello.yaml']],
  ])('checks out %s (%s), by plain path relative to the file', (_, ref, names) => {
    const resolved = ref === 'FIRST' ? first : ref === 'FIRST7' ? first.slice(0, 7) : ref;
    const { files, commit } = readGitSource({ url: './repo', ref: resolved, path: 'cases' }, sandbox, 'git');
    expect(Object.keys(files)).toEqual(names);
    if (ref.startsWith('FIRST') || ref === 'v1') expect(commit).toBe(first);
    else expect(commit).toBe(git(repo, 'rev-parse', 'feature'));
  });

  it.each<[string, { url: string; ref?: string; path?: string }, RegExp]>([
    ['a ref that is not there', { url: 'REPO', ref: 'no-such-branch' }, /^spec\.testCasesFrom\[0\]\.git\.ref: "no-such-branch" is no branch, tag or commit of /],
    ['a repository that is not there', { url: 'MISSING' }, /^spec\.testCasesFrom\[0\]\.git: git clone ".*missing" failed: /],
    ['a path that is not there', { url: 'REPO', path: 'nope' }, /^spec\.testCasesFrom\[0\]\.git\.path: "nope" is not in .* at [0-9a-f]{40}/],
    ['a path through a link out of the repository', { url: 'REPO', path: 'out' }, /^spec\.testCasesFrom\[0\]\.git\.path: "out" leads out of the repository \(a symbolic link\): refused/],
    ['a test case that is a link', { url: 'REPO', path: 'linked' }, /^spec\.testCasesFrom\[0\]\.git: file "hello\.yaml" in .* is a symbolic link/],
  ])('refuses %s, naming the field; the clone is removed', (_, source, message) => {
    const url = source.url === 'REPO' ? `file://${repo}` : join(sandbox, 'missing');
    expect(refusal(() => readGitSource({ ...source, url }, sandbox, 'spec.testCasesFrom[0].git'))).toMatch(message);
  });

  it('records a URL without its password', () => {
    expect(redactUrl('https://me:secret-token@example.com/evals.git')).toBe('https://example.com/evals.git');
    expect(redactUrl('git@example.com:evals.git')).toBe('git@example.com:evals.git');
  });
});

describe('an evaluation file with directory and git sources', () => {
  it('resolves them from the file\'s directory, inline first; evaluation.json holds the test cases and where they came from', () => {
    mkdirSync(join(dir, 'cases'));
    writeFileSync(join(dir, 'cases', 'hello.yaml'), HELLO);
    const file = join(dir, 'e.yaml');
    const text = `kind: Evaluation\nmetadata: { name: e }\nspec:\n  matrix: [{ harness: gg, models: [stub] }]\n  testCases: [{ name: inline, prompt: x }]\n  testCasesFrom:\n    - directory: cases\n    - git: { url: "file://${repo}", ref: v1, path: cases }\n`;
    // The directory holds hello, and so does the tag: the second is refused, naming both.
    expect(() => parseEvaluationDocument(text, file)).toThrow(/^.*e\.yaml: spec\.testCasesFrom\[1\]\.git "file:\/\/.*" path "cases" file "hello\.yaml": test case "hello" is also spec\.testCasesFrom\[0\]\.directory "cases" file "hello\.yaml"$/);
    writeFileSync(join(dir, 'cases', 'hello.yaml'), '');
    rmSync(join(dir, 'cases', 'hello.yaml'));
    writeFileSync(join(dir, 'cases', 'local.yml'), 'prompt: local\n');
    const doc = parseEvaluationDocument(text, file);
    expect(doc.spec.testCases.map((t) => t.name)).toEqual(['inline', 'local', 'hello']);
    expect(doc.sources).toEqual([{ index: 0, directory: join(dir, 'cases') }, { index: 1, git: { url: `file://${repo}`, ref: 'v1', path: 'cases', commit: first } }]);
    const results = ResultsDir.create(join(dir, 'results'), doc);
    expect(ResultsDir.open(results.dir).doc).toEqual(doc);
  });

  it('a bare spec names the fields without "spec."; a source is read only once the spec is valid', () => {
    const file = join(dir, 'bare.yaml');
    expect(() => parseEvaluationDocument('matrix: [{ harness: gg, models: [stub] }]\ntestCasesFrom: [{ directory: nowhere }]\n', file)).toThrow(new RegExp(`^${file}: testCasesFrom\\[0\\]\\.directory: cannot read the directory ${join(dir, 'nowhere')}: ENOENT`));
    let read = 0;
    const parsed = parseEvaluationFile('matrix: [{ harness: gg, models: [stub] }]\ntestCasesFrom: [{ directory: x }, { configMap: { name: c } }]\n', file);
    expect(() => resolveEvaluationFile(parsed, () => (read++, new Map()))).toThrow(/testCasesFrom\[1\]\.configMap "c": a ConfigMap is read on a cluster/);
    expect(read).toBe(0);
  });
});
