// The run page's side panels as markup: the timeline writes each stage's state out, usage tells "not reported" from
// 0, costs show both figures and the catalogue version, Kubernetes warnings stand out in words.
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { Check, Costs, KubeEvents, Usage } from './RunFacts.tsx';
import { Timeline } from './Timeline.tsx';
import { RunStatusPanel } from './RunStatusPanel.tsx';

const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

describe('run page panels', () => {
  it('the timeline lists every stage with its state and duration', () => {
    const html = renderToString(
      h(Timeline, {
        spans: [
          { stage: 'install_harness', label: 'install', state: 'completed', durationMs: 20_000 },
          { stage: 'session', label: 'session', state: 'running', durationMs: 65_000 },
          { stage: 'teardown', label: 'teardown', state: 'pending' },
        ],
      }),
    );
    expect(text(html)).toBe('install completed 20 s session running 1m 05s teardown pending');
    expect(html).toContain('data-state="running"');
    expect(html).toContain('style="width:100%;"');
  });

  it('usage by token class: a null class is "not reported", a 0 is 0', () => {
    const t = text(renderToString(h(Usage, { tokens: { input: 1200, output: 0, cache_read: null, cache_write: null, reasoning: null } })));
    expect(t).toContain('Input (not from cache) 1,200');
    expect(t).toContain('Cache read not reported');
    expect(t).toContain('Output (reasoning included) 0');
  });

  it('both costs and the catalogue version', () => {
    const t = text(renderToString(h(Costs, { actual: 0.5, comparable: 0.0042, catalog: '2026-11-30', authMode: 'api-key' })));
    expect(t).toMatch(/Actual .* \$0\.50 Comparable .* \$0\.0042 Catalogue version 2026-11-30/);
  });

  it('the check: verdict, exit code, reward only when it wrote one, duration', () => {
    const passed = renderToString(h(Check, { check: { passed: true, exitCode: 0, reward: 0.75, durationMs: 12_300 } }));
    expect(text(passed)).toBe('Check Verdict passed Exit code 0 Reward 0.75 Duration 12 s');
    expect(passed).toContain('data-check="passed"');
    const killed = renderToString(h(Check, { check: { passed: false, exitCode: null, reward: null, durationMs: 600_000 } }));
    expect(text(killed)).toBe('Check Verdict failed Exit code none (killed or did not start) Duration 10m 00s');
    expect(killed).toContain('data-check="failed"');
  });

  it('the status panel shows the egress profile with its hosts, "*" and none in words', () => {
    const panel = (hosts: string[]) => text(renderToString(h(RunStatusPanel, { status: { phase: 'Running', egress: { profile: 'registries', hosts } }, result: null, nowMs: Date.now() })));
    expect(panel(['registry.npmjs.org', 'pypi.org'])).toBe('Status Egress registries: registry.npmjs.org, pypi.org');
    expect(panel(['*'])).toBe('Status Egress registries: any public host');
    expect(panel([])).toBe('Status Egress registries: no host outside the cluster');
  });

  it('Kubernetes Events: reason, type in words, count, message and source', () => {
    const t = text(renderToString(h(KubeEvents, { items: [{ type: 'Warning', reason: 'BackOff', message: 'Back-off pulling image', count: 3, source: 'kubelet' }], nowMs: Date.now() })));
    expect(t).toMatch(/^Kubernetes Events BackOff Warning ×3 .* Back-off pulling image · kubelet$/);
  });
});
