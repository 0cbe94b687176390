// The registry finds installed harnesses (a folder with a harness.toml) and built-ins (gg: a descriptor, no
// file, nothing to install) the same way, for every caller; a built-in's manifest follows the run's model.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getHarness, HARNESSES_DIR, listHarnesses, loadAdapter, manifestForModel, resolveHarness } from './registry.ts';
import { UnknownHarnessError } from '../shared/errors.ts';

const scratch = mkdtempSync(join(tmpdir(), 'tcab-registry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('gg as a built-in', () => {
  it('is listed and found like every harness, without a harness.toml and with nothing to install', () => {
    expect(existsSync(join(HARNESSES_DIR, 'gg', 'harness.toml'))).toBe(false);
    const gg = listHarnesses().find((h) => h.manifest.slug === 'gg');
    expect(gg?.dir).toBe(join(HARNESSES_DIR, 'gg'));
    expect(gg?.manifest.install).toBeUndefined();
    expect(gg?.manifest.builtin?.entry).toBe(join(HARNESSES_DIR, 'gg', 'main.ts'));
    expect(getHarness('gg').manifest).toEqual(gg?.manifest);
  });

  it('is found from any registry root (tests point the driver at generated harness folders)', () => {
    expect(getHarness('gg', scratch).manifest.slug).toBe('gg');
    expect(listHarnesses(scratch).map((h) => h.manifest.slug)).toEqual(['gg']);
  });

  it('without a model takes any provider key; listings show it can run offline', () => {
    expect(getHarness('gg').manifest.auth.api_key).toEqual({ host_vars: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'], inject_as: 'TCAB_GG_API_KEY', inject_env: {} });
    expect(getHarness('gg').manifest.stub_wire).toBe('anthropic-messages');
  });

  it.each([
    ['claude-sonnet-4-5', 'ANTHROPIC_API_KEY', 'anthropic-messages', 'anthropic'],
    ['anthropic/claude-sonnet-4.5', 'ANTHROPIC_API_KEY', 'anthropic-messages', 'mixed'],
    ['gpt-5', 'OPENAI_API_KEY', 'openai-responses', 'openai'],
    ['o3', 'OPENAI_API_KEY', 'openai-responses', 'openai'],
    ['openai/gpt-5', 'OPENAI_API_KEY', 'openai-responses', 'mixed'],
    ['openrouter/qwen/qwen3-coder', 'OPENROUTER_API_KEY', 'openai-chat', 'mixed'],
    ['qwen/qwen3-coder', 'OPENROUTER_API_KEY', 'openai-chat', 'mixed'],
  ])('a run of %s needs %s and speaks %s to the stub (ids: %s)', (model, keyVar, wire, ids) => {
    const manifest = manifestForModel(getHarness('gg'), model);
    expect(manifest.auth.api_key?.host_vars).toEqual([keyVar]);
    expect(manifest.stub_wire).toBe(wire);
    expect(manifest.model_ids).toBe(ids);
  });

  it('an installed harness has one manifest for every model', () => {
    const claude = getHarness('claude');
    expect(manifestForModel(claude, 'gpt-5')).toBe(claude.manifest);
  });

  it("loads gg's adapter through the registry, and reading gg's descriptor loads no AI SDK", async () => {
    expect((await loadAdapter('gg')).slug).toBe('gg');
    // Every module the registry, gg's adapter and its model-specific manifest pull in, recorded by a resolve hook.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
      const registry = await import(${JSON.stringify(join(HARNESSES_DIR, 'registry.ts'))});
      registry.manifestForModel(registry.getHarness('gg'), 'claude-sonnet-4-5');
      await registry.loadAdapter('gg');
      process.stdout.write(JSON.stringify(seen));`;
    const seen = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
    expect(seen.some((s) => s.endsWith('/gg/adapter.ts'))).toBe(true);
    expect(seen.filter((s) => s === 'ai' || s.startsWith('@ai-sdk/'))).toEqual([]);
  });
});

describe('manifest files', () => {
  const toml = (body: string) => {
    const dir = join(scratch, 'files', 'fake');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'harness.toml'), body);
    return join(scratch, 'files');
  };
  const kilo = readFileSync(join(HARNESSES_DIR, 'kilo', 'harness.toml'), 'utf8').replace('slug = "kilo"', 'slug = "fake"');

  it.each([
    ['no install section', kilo.replace(/\[install\][\s\S]*?(?=\[auth\])/, ''), 'install: required, unless the harness is built in'],
    ['a release pattern that is no regular expression', kilo.replace('[install]\n', "[install]\nrelease_pattern = '^(1'\n"), 'install.release_pattern: must be a regular expression'],
    ['a builtin section instead', `${kilo.replace(/\[install\][\s\S]*?(?=\[auth\])/, '')}\n[builtin]\nentry = "main.ts"\n`, 'builtin: only a built-in descriptor sets it'],
  ])('%s is refused, naming the field', (_what, body, message) => {
    expect(() => getHarness('fake', toml(body))).toThrow(message);
  });
});

describe('one lookup per harness (issue 37)', () => {
  const root = join(scratch, 'memo');
  const write = (body: string) => {
    mkdirSync(join(root, 'fake'), { recursive: true });
    writeFileSync(join(root, 'fake', 'harness.toml'), body);
  };
  const kilo = readFileSync(join(HARNESSES_DIR, 'kilo', 'harness.toml'), 'utf8').replace('slug = "kilo"', 'slug = "fake"');

  it('a manifest file is parsed once while unchanged, and again once it changes', () => {
    write(kilo);
    const first = getHarness('fake', root).manifest;
    expect(getHarness('fake', root).manifest).toBe(first); // the same object: not parsed again
    expect(listHarnesses(root).find((h) => h.manifest.slug === 'fake')!.manifest).toBe(first);
    write(kilo.replace(/^name = ".*"$/m, 'name = "Fake Renamed"'));
    utimesSync(join(root, 'fake', 'harness.toml'), new Date(), new Date(Date.now() + 5000));
    const changed = getHarness('fake', root).manifest;
    expect(changed).not.toBe(first);
    expect(changed.name).toBe('Fake Renamed');
  });

  it('resolveHarness gives a run its manifest for the model and its adapter in one lookup; an unknown slug is UnknownHarnessError naming the known ones', async () => {
    const gg = await resolveHarness('gg', 'gpt-5.5');
    expect(gg.manifest).toEqual(manifestForModel(getHarness('gg'), 'gpt-5.5'));
    expect(gg.manifest.stub_wire).not.toBe(manifestForModel(getHarness('gg'), 'claude-sonnet-4-5').stub_wire);
    expect(gg.adapter.invocation({ model: 'gpt-5.5', prompt: 'p', workdir: '/w', home: '/h' }).argv.length).toBeGreaterThan(0);
    const claude = await resolveHarness('claude', 'claude-sonnet-4-5');
    expect(claude.manifest).toBe(getHarness('claude').manifest);
    const unknown = await resolveHarness('nope', 'm').catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(UnknownHarnessError);
    expect((unknown as UnknownHarnessError).known).toEqual(listHarnesses().map((h) => h.manifest.slug));
  });
});
