// An Evaluation's test cases from ConfigMaps (spec.testCasesFrom): each key ending .yaml, .yml or .json one test case
// named by the key, inline ones first, every problem naming the field, the ConfigMap and the key. And any ConfigMap
// content at all is test cases or one bounded problem, never a throw.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { EvaluationSpec, InlineEvaluationSpec } from './schema.ts';
import type { EvaluationSpecInput } from './schema.ts';
import { evaluationSlots } from './slots.ts';
import { configMapNamesOf, resolveEvaluationSpec, resolveTestCases } from './test-case-sources.ts';
import type { ConfigMapLookup, LocalSources } from './test-case-sources.ts';

const ADD = 'prompt: Write add.py\ntestCase:\n  check:\n    command: python3 -c "import add"\n';
const SUM = '{"prompt": "Write sum.py"}';

const spec = (input: Partial<EvaluationSpecInput>) => EvaluationSpec.parse({ matrix: [{ harness: 'gg', models: ['stub'] }], ...input });
const maps = (all: Record<string, Record<string, string> | undefined>): ConfigMapLookup => (name) => (Object.hasOwn(all, name) ? { data: all[name] } : undefined);
const problemOf = (s: EvaluationSpec, lookup: ConfigMapLookup, local?: LocalSources) => {
  const resolved = resolveTestCases(s, lookup, local);
  if (!('problem' in resolved)) throw new Error(`expected a problem, got ${JSON.stringify(resolved)}`);
  return resolved.problem;
};

describe('resolveTestCases', () => {
  it('inline first, then each ConfigMap in the order given, its keys sorted; other keys ignored', () => {
    const resolved = resolveTestCases(
      spec({ testCases: [{ name: 'inline', prompt: 'x' }], testCasesFrom: [{ configMap: { name: 'b' } }, { configMap: { name: 'a' } }] }),
      maps({ a: { 'sum.json': SUM, 'README.md': '# not a test case', 'add.yaml': ADD }, b: { 'zeta.yml': 'prompt: z' } }),
    );
    expect(resolved).toEqual({
      testCases: [
        { name: 'inline', prompt: 'x' },
        { name: 'zeta', prompt: 'z' },
        // The schema's defaults apply as inline (the check's timeout).
        { name: 'add', prompt: 'Write add.py', testCase: { check: { command: 'python3 -c "import add"', timeoutSeconds: 600 } } },
        { name: 'sum', prompt: 'Write sum.py' },
      ],
    });
  });

  it('a test case from a ConfigMap has the slots (and Run names) it would have inline', () => {
    const fromMap = resolveEvaluationSpec(spec({ testCasesFrom: [{ configMap: { name: 'cases' } }], repeats: 2 }), maps({ cases: { 'add.yaml': ADD } }));
    if (!('spec' in fromMap)) throw new Error(fromMap.problem);
    expect(fromMap.spec).not.toHaveProperty('testCasesFrom');
    const inline = InlineEvaluationSpec.parse({ matrix: [{ harness: 'gg', models: ['stub'] }], testCases: [{ name: 'add', prompt: 'Write add.py', testCase: { check: { command: 'python3 -c "import add"' } } }], repeats: 2 });
    expect(evaluationSlots('e', fromMap.spec)).toEqual(evaluationSlots('e', inline));
  });

  it.each<[string, Partial<EvaluationSpecInput>, Record<string, Record<string, string> | undefined>, string]>([
    ['a missing ConfigMap', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, {}, 'spec.testCasesFrom[0].configMap "cases": not found (or not labelled tcab.dev/test-cases)'],
    ['a ConfigMap without a test case', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'notes.txt': 'x' } }, 'spec.testCasesFrom[0].configMap "cases": no key ending .yaml, .yml or .json (each such key is a test case)'],
    ['a ConfigMap without data', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: undefined }, 'spec.testCasesFrom[0].configMap "cases": no key ending .yaml, .yml or .json'],
    ['a bad check', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'prompt: x\ntestCase: { check: { command: "" } }' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": testCase.check.command: '],
    ['no prompt', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'testCase: {}' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": prompt: '],
    ['a name in the document', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'name: add\nprompt: x' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": (root): Unrecognized key: "name"'],
    ['not YAML', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'prompt: [' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": not YAML or JSON: '],
    ['two YAML documents', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'prompt: a\n---\nprompt: b\n' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": not YAML or JSON: '],
    ['not an object', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.json': '"just a prompt"' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.json": (root): '],
    ['a name that is not a DNS label', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'Add_Two.yaml': 'prompt: x' } }, 'spec.testCasesFrom[0].configMap "cases" key "Add_Two.yaml": the name "Add_Two" (the key without its extension) must be 1-40 lower case letters'],
    ['an empty name', { testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { '.yaml': 'prompt: x' } }, 'spec.testCasesFrom[0].configMap "cases" key ".yaml": the name "" (the key without its extension) must be'],
    ['a name given inline too', { testCases: [{ name: 'z', prompt: 'x' }, { name: 'add', prompt: 'x' }], testCasesFrom: [{ configMap: { name: 'cases' } }] }, { cases: { 'add.yaml': 'prompt: x' } }, 'spec.testCasesFrom[0].configMap "cases" key "add.yaml": test case "add" is also spec.testCases[1]'],
    ['a name in two ConfigMaps', { testCasesFrom: [{ configMap: { name: 'a' } }, { configMap: { name: 'b' } }] }, { a: { 'add.yml': 'prompt: x' }, b: { 'add.yaml': 'prompt: y' } }, 'spec.testCasesFrom[1].configMap "b" key "add.yaml": test case "add" is also spec.testCasesFrom[0].configMap "a" key "add.yml"'],
    ['a name twice in one ConfigMap', { testCasesFrom: [{ configMap: { name: 'a' } }] }, { a: { 'add.yaml': 'prompt: x', 'add.json': '{"prompt": "y"}' } }, 'spec.testCasesFrom[0].configMap "a" key "add.yaml": test case "add" is also spec.testCasesFrom[0].configMap "a" key "add.json"'],
    ['too many Runs', { matrix: [{ harness: 'gg', models: Array.from({ length: 50 }, (_, i) => `m${i}`) }], repeats: 100, testCasesFrom: [{ configMap: { name: 'a' } }] }, { a: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}.yaml`, 'prompt: x'])) }, 'spec.testCasesFrom: the matrix makes 105000 Runs with the test cases of testCasesFrom; at most 100000'],
  ])('%s: the problem names the field and the key', (_, input, all, problem) => {
    expect(problemOf(spec(input), maps(all))).toContain(problem);
    expect(problemOf(spec(input), maps(all)).startsWith(problem.slice(0, 20))).toBe(true);
  });

  it('an alias bomb is refused, not expanded', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n');
    expect(problemOf(spec({ testCasesFrom: [{ configMap: { name: 'a' } }] }), maps({ a: { 'bomb.yaml': bomb } }))).toMatch(/^spec\.testCasesFrom\[0\]\.configMap "a" key "bomb\.yaml": not YAML or JSON: /);
  });

  it('a `__proto__` key of the document is refused like any unknown key, and pollutes nothing', () => {
    const problem = problemOf(spec({ testCasesFrom: [{ configMap: { name: 'a' } }] }), maps({ a: { 'add.yaml': 'prompt: x\n__proto__: { polluted: true }\n' } }));
    expect(problem).toMatch(/^spec\.testCasesFrom\[0\]\.configMap "a" key "add\.yaml": /);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('EvaluationSpec with testCasesFrom', () => {
  it.each<[string, unknown, string, string]>([
    ['neither testCases nor testCasesFrom', { matrix: [{ harness: 'gg', models: ['stub'] }] }, 'testCases', 'give the test cases: testCases (inline), testCasesFrom (ConfigMaps, directories, git), or both'],
    ['a ConfigMap named twice', { matrix: [{ harness: 'gg', models: ['stub'] }], testCasesFrom: [{ configMap: { name: 'a' } }, { configMap: { name: 'a' } }] }, 'testCasesFrom.1.configMap.name', 'ConfigMap "a" is named twice'],
    ['a ConfigMap name that is not one', { matrix: [{ harness: 'gg', models: ['stub'] }], testCasesFrom: [{ configMap: { name: 'Cases' } }] }, 'testCasesFrom.0.configMap.name', 'must be a ConfigMap name'],
    ['more than 20 ConfigMaps', { matrix: [{ harness: 'gg', models: ['stub'] }], testCasesFrom: Array.from({ length: 21 }, (_, i) => ({ configMap: { name: `c${i}` } })) }, 'testCasesFrom', '<=20'],
  ])('refuses %s naming the field', (_, bad, path, message) => {
    const parsed = EvaluationSpec.safeParse(bad);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.filter((i) => i.path.join('.') === path).map((i) => i.message)).toEqual([expect.stringContaining(message)]);
  });

  it('takes testCasesFrom alone; a workstation (InlineEvaluationSpec) refuses it, naming the field', () => {
    const input = { matrix: [{ harness: 'gg', models: ['stub'] }], testCasesFrom: [{ configMap: { name: 'cases' } }] };
    expect(EvaluationSpec.parse(input).testCasesFrom).toEqual([{ configMap: { name: 'cases' } }]);
    const inline = InlineEvaluationSpec.safeParse({ ...input, testCases: [{ name: 'a', prompt: 'x' }] });
    expect(inline.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['testCasesFrom', expect.stringContaining('a ConfigMap is read on a cluster')]]);
  });
});

describe('test cases from a directory or git (read by tcab, given as LocalSources)', () => {
  const none: ConfigMapLookup = () => undefined;

  it('are read with the ConfigMap rules, in source order, inline first; a problem names the source and the file', () => {
    const s = spec({ testCases: [{ name: 'inline', prompt: 'x' }], testCasesFrom: [{ git: { url: 'file:///r.git', path: 'cases' } }, { configMap: { name: 'm' } }, { directory: 'cases' }] });
    const resolved = resolveTestCases(s, maps({ m: { 'zeta.yml': 'prompt: z' } }), new Map<number, Record<string, string>>([[0, { 'sum.json': SUM, 'README.md': '#' }], [2, { 'add.yaml': ADD }]]));
    expect(resolved).toEqual({ testCases: [{ name: 'inline', prompt: 'x' }, { name: 'sum', prompt: 'Write sum.py' }, { name: 'zeta', prompt: 'z' }, { name: 'add', prompt: 'Write add.py', testCase: { check: { command: 'python3 -c "import add"', timeoutSeconds: 600 } } }] });
    expect(problemOf(s, maps({ m: { 'sum.yaml': 'prompt: y' } }), new Map<number, Record<string, string>>([[0, { 'sum.json': SUM }], [2, { 'add.yaml': ADD }]]))).toBe('spec.testCasesFrom[1].configMap "m" key "sum.yaml": test case "sum" is also spec.testCasesFrom[0].git "file:///r.git" path "cases" file "sum.json"');
    expect(problemOf(spec({ testCasesFrom: [{ directory: 'cases' }] }), none, new Map([[0, { 'notes.txt': 'x' }]]))).toBe('spec.testCasesFrom[0].directory "cases": no file ending .yaml, .yml or .json (each such file is a test case)');
    expect(problemOf(spec({ testCasesFrom: [{ directory: 'cases' }] }), none, new Map([[0, { 'Add.yaml': 'prompt: x' }]]))).toMatch(/^spec\.testCasesFrom\[0\]\.directory "cases" file "Add\.yaml": the name "Add" \(the file without its extension\) must be 1-40 lower case/);
  });

  it.each([
    [{ directory: '../cases' }, 'spec.testCasesFrom[0].directory "../cases": a directory is read by tcab where the evaluation file is, never by the cluster: apply the file with `tcab eval apply FILE`'],
    [{ git: { url: 'https://example.com/e.git' } }, 'spec.testCasesFrom[0].git "https://example.com/e.git": a git repository is read by tcab where the evaluation file is, never by the cluster'],
  ])('not read (the dispatcher): refused, naming the field and tcab eval apply (%#)', (source, problem) => {
    expect(problemOf(spec({ testCasesFrom: [source] }), none)).toContain(problem);
  });

  test.prop([fc.dictionary(fc.oneof(fc.constantFrom('a.yaml', 'b.yml', 'c.json', 'A.yaml', '.yaml', 'x.txt'), fc.string({ maxLength: 12 })), fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('prompt: p', '{"prompt": "q"}', 'prompt: [', 'testCase: {}')), { maxKeys: 5 })])(
    'a ConfigMap and a directory with the same files give the same test cases, or the same problem but for the words',
    (files) => {
      const fromMap = resolveTestCases(spec({ testCasesFrom: [{ configMap: { name: 'm' } }] }), maps({ m: files }));
      const fromDir = resolveTestCases(spec({ testCasesFrom: [{ directory: 'm' }] }), none, new Map([[0, files]]));
      if ('problem' in fromMap) expect('problem' in fromDir && fromDir.problem.replace('.directory "m"', '.configMap "m"').replaceAll(' file', ' key')).toBe(fromMap.problem.replaceAll(' file', ' key'));
      else expect(fromDir).toEqual(fromMap);
    },
  );
});

describe('TestCasesFrom: exactly one of configMap, directory or git', () => {
  const parse = (source: unknown) => EvaluationSpec.safeParse({ matrix: [{ harness: 'gg', models: ['stub'] }], testCasesFrom: [source] });
  it.each<[unknown, string, string]>([
    [{}, 'testCasesFrom.0', 'give one of configMap, directory or git'],
    [{ directory: 'a', git: { url: 'u' } }, 'testCasesFrom.0', 'give one of configMap, directory or git, not directory and git'],
    [{ directory: 5 }, 'testCasesFrom.0', 'directory: Invalid input: expected string'],
    [{ directory: '' }, 'testCasesFrom.0.directory', 'Too small'],
    [{ directory: 'a\u0000b' }, 'testCasesFrom.0.directory', 'must be a path (no NUL or line break)'],
    [{ directory: 'a', extra: 1 }, 'testCasesFrom.0', 'Unrecognized key: "extra"'],
    ['cases', 'testCasesFrom.0', 'must be an object with one of configMap, directory or git'],
    [{ git: { url: 'u', reff: 'main' } }, 'testCasesFrom.0.git', 'Unrecognized key: "reff"'],
    [{ git: { url: '--upload-pack=touch /tmp/x' } }, 'testCasesFrom.0.git.url', 'not an option'],
    [{ git: { url: 'ext::sh -c touch% /tmp/x' } }, 'testCasesFrom.0.git.url', 'not a remote helper'],
    [{ git: { url: 'u', ref: '-b' } }, 'testCasesFrom.0.git.ref', 'not an option'],
    [{ git: { url: 'u', ref: 'main~1' } }, 'testCasesFrom.0.git.ref', 'must be a branch, tag or commit'],
    [{ git: { url: 'u', path: '../outside' } }, 'testCasesFrom.0.git.path', 'must stay inside the repository'],
    [{ git: { url: 'u', path: 'cases/../../x' } }, 'testCasesFrom.0.git.path', 'must stay inside the repository'],
    [{ git: { url: 'u', path: '/etc' } }, 'testCasesFrom.0.git.path', 'must be relative to the root of the repository'],
  ])('refuses %j naming the field', (source, path, message) => {
    const parsed = parse(source);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([[path, expect.stringContaining(message)]]);
  });

  it.each<unknown>([{ directory: '../shared cases' }, { directory: '/abs/cases' }, { git: { url: 'https://example.com/e.git' } }, { git: { url: 'git@example.com:e.git', ref: 'v1.2', path: 'evals/cases' } }, { git: { url: './local-repo', ref: '0123abc' } }])('takes %j', (source) => {
    expect(parse(source).success).toBe(true);
  });
});

describe('configMapNamesOf', () => {
  it.each<[unknown, string[]]>([
    [{ testCasesFrom: [{ configMap: { name: 'a' } }, { configMap: { name: 'b' } }] }, ['a', 'b']],
    [{ testCasesFrom: [null, 1, { configMap: null }, { configMap: { name: 7 } }, { configMap: { name: 'c' } }] }, ['c']],
    [{ testCasesFrom: 'a' }, []],
    [null, []],
    [undefined, []],
  ])('reads the names from any stored spec (%#)', (stored, names) => {
    expect(configMapNamesOf(stored)).toEqual(names);
  });
});

describe('hostile ConfigMaps', () => {
  const key = fc.oneof(
    fc.constantFrom('__proto__', '__proto__.yaml', 'constructor.json', 'toString.yml', 'hasOwnProperty.yaml', '.yaml', 'a.yaml', 'a.yml', 'a.json', 'A.yaml', 'a_b.yaml', `${'x'.repeat(41)}.yaml`, `${'k'.repeat(300)}.yaml`),
    fc.string({ maxLength: 30 }).map((s) => `${s}.yaml`),
    fc.string({ maxLength: 30 }),
  );
  const value = fc.oneof(
    fc.string(),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.record({ prompt: fc.string({ minLength: 1 }), testCase: fc.option(fc.record({ check: fc.record({ command: fc.string() }) }), { nil: undefined }) }).map((v) => JSON.stringify(v)),
    fc.constantFrom('prompt: [', 'prompt: x\n---\nprompt: y', '__proto__: { prompt: x }', 'prompt: x\n__proto__: { polluted: 1 }', '&a [*a]', `prompt: ${'p'.repeat(200_000)}`, `prompt: "${'"'.repeat(500)}`),
  );
  const hostile = fc.array(fc.tuple(key, value), { maxLength: 8 }).map((entries) => {
    // Own properties, as JSON.parse makes them (a `__proto__` key included), never the prototype.
    const out: Record<string, string> = {};
    for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
  // And ConfigMaps that are right (names unique within one), so the property sees test cases too.
  const good = fc
    .uniqueArray(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?$/), { minLength: 1, maxLength: 4 })
    .chain((names) => fc.tuple(fc.constant(names), fc.array(fc.constantFrom('yaml', 'yml', 'json'), { minLength: names.length, maxLength: names.length }), fc.array(fc.string({ minLength: 1, maxLength: 20 }), { minLength: names.length, maxLength: names.length })))
    .map(([names, extensions, prompts]) => Object.fromEntries(names.map((name, i) => [`${name}.${extensions[i]}`, JSON.stringify({ prompt: prompts[i] })])));
  const data = fc.oneof(good, hostile);

  test.prop([fc.array(fc.option(data, { nil: undefined }), { minLength: 1, maxLength: 3 }), fc.option(fc.constantFrom('a', 'add', '__proto__'), { nil: undefined })], { numRuns: 300 })(
    'any data is test cases with unique names (inline first) or one bounded problem naming a field, never a throw',
    (contents, inlineName) => {
      const names = contents.map((_, i) => `cm-${i}`);
      const s = spec({
        ...(inlineName && inlineName !== '__proto__' ? { testCases: [{ name: inlineName, prompt: 'inline' }] } : {}),
        testCasesFrom: names.map((name) => ({ configMap: { name } })),
      });
      const resolved = resolveTestCases(s, (name) => {
        const i = names.indexOf(name);
        return i < 0 || contents[i] === undefined ? undefined : { data: contents[i] };
      });
      if ('problem' in resolved) {
        expect(resolved.problem).toMatch(/^spec\.testCasesFrom(\[\d+\]\.configMap "cm-\d+"( key ".*?")?)?: /s);
        expect(resolved.problem.length).toBeLessThan(2_000);
      } else {
        const got = resolved.testCases.map((t) => t.name);
        expect(new Set(got).size).toBe(got.length);
        for (const t of resolved.testCases) expect(t.name).toMatch(/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/);
        if (s.testCases) expect(got[0]).toBe(inlineName);
        expect(got.length).toBeGreaterThanOrEqual(names.length + (s.testCases ? 1 : 0));
      }
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    },
  );
});
