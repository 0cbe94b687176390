// A container's environment as the kubelet builds it: service discovery variables for the apiserver, envFrom,
// then env in order (value with $(VAR) expansion, or valueFrom secretKeyRef / configMapKeyRef / fieldRef).
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { expand } from './images.ts';

export interface ObjectSource {
  secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  configMap(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
}

export class EnvError extends Error {}

function fieldValue(pod: V1Pod, path: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations)?.[m[2]!] ?? '';
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata?.name,
    'metadata.namespace': pod.metadata?.namespace,
    'metadata.uid': pod.metadata?.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
    'status.podIP': '127.0.0.1',
    'status.hostIP': '127.0.0.1',
  };
  if (!(path in fields)) throw new EnvError(`unsupported fieldRef ${path}`);
  return fields[path] ?? '';
}

export async function containerEnv(pod: V1Pod, container: V1Container, source: ObjectSource, base: Record<string, string>): Promise<Record<string, string>> {
  const ns = pod.metadata!.namespace!;
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const ref = from.secretRef ?? from.configMapRef;
    const data = from.secretRef ? await source.secret(ns, from.secretRef.name ?? '') : await source.configMap(ns, from.configMapRef!.name ?? '');
    if (!data) {
      if (ref?.optional) continue;
      throw new EnvError(`${from.secretRef ? 'secret' : 'configmap'} "${ref?.name}" not found`);
    }
    for (const [k, v] of Object.entries(data)) env[`${from.prefix ?? ''}${k}`] = v.toString('utf8');
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (!from) {
      env[variable.name] = expand(variable.value ?? '', env);
      continue;
    }
    const keyRef = from.secretKeyRef ?? from.configMapKeyRef;
    if (keyRef) {
      const kind = from.secretKeyRef ? 'secret' : 'configmap';
      const data = from.secretKeyRef ? await source.secret(ns, keyRef.name ?? '') : await source.configMap(ns, keyRef.name ?? '');
      const value = data?.[keyRef.key];
      if (value === undefined) {
        if (keyRef.optional) continue;
        throw new EnvError(data ? `couldn't find key ${keyRef.key} in ${kind} ${ns}/${keyRef.name}` : `${kind} "${keyRef.name}" not found`);
      }
      env[variable.name] = value.toString('utf8');
    } else if (from.fieldRef) {
      env[variable.name] = fieldValue(pod, from.fieldRef.fieldPath);
    } else {
      throw new EnvError(`unsupported valueFrom for ${variable.name}`);
    }
  }
  return env;
}
