// Pod volumes materialised under the pod's directory, as the kubelet's volume plugins would: secret and
// configMap (keys as file names, items/paths, defaultMode/mode, optional), emptyDir, downwardAPI, and projected
// (serviceAccountToken through the TokenRequest API bound to the pod, configMap, secret, downwardAPI).
// With fsGroup, files belong to that group and are group-readable, so a non-root container can read them.
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node';
import type { ObjectSource } from './env.ts';
import { EnvError } from './env.ts';

export interface TokenSource {
  /** A token for the pod's ServiceAccount, bound to the pod (TokenRequest API). */
  token(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
}

interface FileSpec {
  path: string;
  content: Buffer;
  mode: number;
}

function keyFiles(data: Record<string, Buffer>, items: V1KeyToPath[] | undefined, defaultMode: number, what: string): FileSpec[] {
  if (!items || items.length === 0) return Object.entries(data).map(([key, content]) => ({ path: key, content, mode: defaultMode }));
  return items.map((item) => {
    const content = data[item.key];
    if (!content) throw new EnvError(`${what}: key ${item.key} not found`);
    return { path: item.path, content, mode: item.mode ?? defaultMode };
  });
}

function downwardFiles(pod: V1Pod, items: { path: string; fieldRef?: { fieldPath: string }; mode?: number }[], defaultMode: number): FileSpec[] {
  return items.map((item) => {
    const path = item.fieldRef?.fieldPath;
    const values: Record<string, string | undefined> = { 'metadata.name': pod.metadata?.name, 'metadata.namespace': pod.metadata?.namespace, 'metadata.uid': pod.metadata?.uid };
    const labels = path === 'metadata.labels' ? Object.entries(pod.metadata?.labels ?? {}).map(([k, v]) => `${k}="${v}"`).join('\n') : undefined;
    if (!path || (!(path in values) && labels === undefined)) throw new EnvError(`unsupported downwardAPI item ${item.path}`);
    return { path: item.path, content: Buffer.from(labels ?? values[path] ?? ''), mode: item.mode ?? defaultMode };
  });
}

async function volumeFiles(pod: V1Pod, volume: V1Volume, objects: ObjectSource, tokens: TokenSource): Promise<FileSpec[] | 'emptyDir'> {
  const ns = pod.metadata!.namespace!;
  if (volume.emptyDir) return 'emptyDir';
  if (volume.secret) {
    const data = await objects.secret(ns, volume.secret.secretName!);
    if (!data) {
      if (volume.secret.optional) return [];
      throw new EnvError(`secret "${volume.secret.secretName}" not found`);
    }
    return keyFiles(data, volume.secret.items, volume.secret.defaultMode ?? 0o644, `secret ${volume.secret.secretName}`);
  }
  if (volume.configMap) {
    const data = await objects.configMap(ns, volume.configMap.name ?? '');
    if (!data) {
      if (volume.configMap.optional) return [];
      throw new EnvError(`configmap "${volume.configMap.name}" not found`);
    }
    return keyFiles(data, volume.configMap.items, volume.configMap.defaultMode ?? 0o644, `configmap ${volume.configMap.name}`);
  }
  if (volume.downwardAPI) return downwardFiles(pod, volume.downwardAPI.items ?? [], volume.downwardAPI.defaultMode ?? 0o644);
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? 0o644;
    const files: FileSpec[] = [];
    for (const source of volume.projected.sources ?? []) {
      if (source.serviceAccountToken) {
        const token = await tokens.token(pod, source.serviceAccountToken.audience, source.serviceAccountToken.expirationSeconds ?? 3607);
        files.push({ path: source.serviceAccountToken.path, content: Buffer.from(token), mode });
      } else if (source.configMap) {
        const data = await objects.configMap(ns, source.configMap.name ?? '');
        if (data) files.push(...keyFiles(data, source.configMap.items, mode, `configmap ${source.configMap.name}`));
        else if (!source.configMap.optional) throw new EnvError(`configmap "${source.configMap.name}" not found`);
      } else if (source.secret) {
        const data = await objects.secret(ns, source.secret.name ?? '');
        if (data) files.push(...keyFiles(data, source.secret.items, mode, `secret ${source.secret.name}`));
        else if (!source.secret.optional) throw new EnvError(`secret "${source.secret.name}" not found`);
      } else if (source.downwardAPI) {
        files.push(...downwardFiles(pod, source.downwardAPI.items ?? [], mode));
      } else {
        throw new EnvError(`volume ${volume.name}: unsupported projected source`);
      }
    }
    return files;
  }
  throw new EnvError(`volume ${volume.name}: unsupported volume type (secret, configMap, emptyDir, downwardAPI, projected are)`);
}

/** Writes every volume of the pod; returns volume name -> host directory. */
export async function prepareVolumes(pod: V1Pod, podDir: string, objects: ObjectSource, tokens: TokenSource): Promise<Map<string, string>> {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  const dirs = new Map<string, string>();
  for (const volume of pod.spec?.volumes ?? []) {
    const dir = join(podDir, 'volumes', volume.name);
    mkdirSync(dir, { recursive: true });
    const files = await volumeFiles(pod, volume, objects, tokens);
    if (files === 'emptyDir') {
      chmodSync(dir, 0o777);
    } else {
      chmodSync(dir, 0o755);
      for (const file of files) {
        const target = join(dir, file.path);
        if (!target.startsWith(`${dir}/`)) throw new EnvError(`volume ${volume.name}: path ${file.path} escapes the volume`);
        mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
        writeFileSync(target, file.content);
        const mode = fsGroup !== undefined ? file.mode | 0o040 : file.mode;
        chmodSync(target, mode);
        if (fsGroup !== undefined) chownSync(target, 0, fsGroup);
      }
    }
    if (fsGroup !== undefined) chownSync(dir, 0, fsGroup);
    dirs.set(volume.name, dir);
  }
  return dirs;
}
