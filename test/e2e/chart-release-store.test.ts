// The node's release store (issue 36), rendered with the pinned helm: driver.releaseStore.hostPath reaches the
// dispatcher as TCAB_DRIVER_RELEASE_STORE, which its config parses into the hostPath volume of every driver Pod; off
// by default (a hostPath is refused by the Pod Security Standards' baseline); the values schema refuses a path that is
// not absolute.
import { describe, expect, it } from 'vitest';
import { dispatcherEnv, refused, render } from './chart-render.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { buildDriverPod } from '../../dispatcher/pods/driver-pod.ts';
import { RunSpec } from '../../shared/run.ts';

const driverPodOf = (env: Record<string, string>) => buildDriverPod({ namespace: 'ns', name: 'r', uid: 'u' }, RunSpec.parse({ harness: 'claude', model: 'm', prompt: 'p' }), dispatcherConfig(env), []).spec!;

describe('charts/tcab driver.releaseStore (issue 36)', () => {
  it('off by default: the dispatcher is given no store, and its driver Pods keep none', async () => {
    const env = dispatcherEnv(await render());
    expect(env.TCAB_DRIVER_RELEASE_STORE).toBeUndefined();
    const pod = driverPodOf(env as Record<string, string>);
    expect(pod.volumes!.some((v) => v.hostPath)).toBe(false);
    expect(pod.containers[0]!.env).toContainEqual({ name: 'TCAB_RELEASE_STORE', value: 'off' });
  });

  it('hostPath set: every driver Pod mounts that node directory, its store in releases/ and the run prefixes in prefixes/', async () => {
    const env = dispatcherEnv(await render('--set', 'driver.releaseStore.hostPath=/var/lib/tcab'));
    expect(env.TCAB_DRIVER_RELEASE_STORE).toBe('/var/lib/tcab');
    const pod = driverPodOf(env as Record<string, string>);
    expect(pod.volumes).toContainEqual({ name: 'release-store', hostPath: { path: '/var/lib/tcab', type: 'DirectoryOrCreate' } });
    expect(pod.containers[0]!.env).toEqual(expect.arrayContaining([{ name: 'TCAB_RELEASE_STORE', value: '/var/cache/tcab/releases' }, { name: 'TCAB_PREFIX_ROOT', value: '/var/cache/tcab/prefixes' }]));
  });

  it.each([['relative/releases'], ['/var/lib/../releases'], ['/var/lib/tcab/']])('the values schema refuses hostPath %j naming it', async (path) => {
    expect(await refused('--set', `driver.releaseStore.hostPath=${path}`)).toContain('/driver/releaseStore/hostPath');
  });
});
