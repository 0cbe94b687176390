// Clients that ask the apiserver for object metadata only (PartialObjectMetadata, as client-go's metadata client
// does): the dispatcher watches Secrets to know which exist, and this way their data never reaches it.
import { CoreV1Api, ListWatch, Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { PooledKubeConfig } from './pooled-config.ts';
import type { ErrorCallback, Informer, KubernetesObject, ObjectCache, ObjectCallback, RequestContext } from '@kubernetes/client-node';

/**
 * A list answers as PartialObjectMetadataList, a watch's events carry PartialObjectMetadata; the apiserver closes a
 * watch at once (200, empty body) when the Accept header offers the list form first, so each request asks for
 * exactly its own. No plain `application/json` fallback: a server that cannot send metadata must fail, not send data.
 */
export const metadataOnlyAccept = (url: string) =>
  `application/json;as=${new URL(url).searchParams.get('watch') === 'true' ? 'PartialObjectMetadata' : 'PartialObjectMetadataList'};g=meta.k8s.io;v=v1`;

/** `kubectl apply` copies the whole object, Secret data included, into this annotation. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Every request made with this config (list or watch) carries the metadata-only Accept header. It is set after
 * the auth headers, which the generated clients and Watch both apply last, so it replaces their default.
 */
export class MetadataOnlyKubeConfig extends PooledKubeConfig {
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('Accept', metadataOnlyAccept(context.getUrl()));
  }
}

/** Secrets the dispatcher's configuration refers to: the only ones it watches (and its Role may see). */
export function configuredSecretNames(config: { TCAB_API_KEY_SECRETS: readonly { secret: string }[]; TCAB_SUBSCRIPTION_SECRETS: Readonly<Record<string, string>> }): string[] {
  return [...new Set([...config.TCAB_API_KEY_SECRETS.map((r) => r.secret), ...Object.values(config.TCAB_SUBSCRIPTION_SECRETS)])].sort();
}

type Cached = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

/** Several single-Secret watches seen as one informer: callbacks go to each, list() is their union. */
export class SecretMetadataInformer implements Informer<KubernetesObject> {
  private readonly watches: readonly Cached[];

  constructor(watches: readonly Cached[]) {
    this.watches = watches;
  }

  on(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<KubernetesObject>): void;
  on(verb: 'error' | 'connect', cb: ErrorCallback): void;
  on(verb: string, cb: ObjectCallback<KubernetesObject> | ErrorCallback): void {
    for (const w of this.watches) w.on(verb as 'add', cb as ObjectCallback<KubernetesObject>);
  }

  off(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<KubernetesObject>): void;
  off(verb: 'error' | 'connect', cb: ErrorCallback): void;
  off(verb: string, cb: ObjectCallback<KubernetesObject> | ErrorCallback): void {
    for (const w of this.watches) w.off(verb as 'add', cb as ObjectCallback<KubernetesObject>);
  }

  async start(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.stop()));
  }

  list(): KubernetesObject[] {
    return this.watches.flatMap((w) => w.list());
  }
}

/**
 * List + watch of the named Secrets as metadata: names, labels, annotations, never data. One watch per name with a
 * `metadata.name` field selector, which RBAC authorizes against `resourceNames`: the chart's Role names exactly
 * these Secrets, so the dispatcher's token cannot list any other. The last-applied annotation (a copy of the data
 * when the Secret was `kubectl apply`d) is dropped as each object arrives, so the cache never holds it.
 */
export function secretMetadataInformer(config: KubeConfig, namespace: string, names: readonly string[]): SecretMetadataInformer {
  const metadataOnly = new MetadataOnlyKubeConfig(config);
  const core = metadataOnly.makeApiClient(CoreV1Api);
  const strip = <T extends KubernetesObject>(object: T): T => {
    if (object.metadata?.annotations) delete object.metadata.annotations[LAST_APPLIED];
    return object;
  };
  const watches = [...new Set(names)].map((name) => {
    const fieldSelector = `metadata.name=${name}`;
    const watch = new ListWatch<KubernetesObject>(
      `/api/v1/namespaces/${namespace}/secrets`,
      new Watch(metadataOnly),
      async () => {
        const list = await core.listNamespacedSecret({ namespace, fieldSelector });
        // An empty PartialObjectMetadataList comes back with `items: null`, which the informer cannot iterate.
        list.items = (list.items ?? []).map(strip);
        return list as never;
      },
      false,
      undefined,
      fieldSelector,
    );
    watch.on('add', strip);
    watch.on('update', strip);
    return watch;
  });
  return new SecretMetadataInformer(watches);
}
