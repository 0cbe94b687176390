// Clients that ask the apiserver for object metadata only (PartialObjectMetadata, as client-go's metadata client
// does): the dispatcher watches Secrets to know which exist, and this way their data never reaches it.
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import type { KubernetesObject, RequestContext } from '@kubernetes/client-node';

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
export class MetadataOnlyKubeConfig extends KubeConfig {
  constructor(base: KubeConfig) {
    super();
    this.loadFromOptions({ clusters: base.clusters, users: base.users, contexts: base.contexts, currentContext: base.currentContext });
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('Accept', metadataOnlyAccept(context.getUrl()));
  }
}

/**
 * List + watch of a namespace's Secrets as metadata: names, labels, annotations, never data. The last-applied
 * annotation (a copy of the data when the Secret was `kubectl apply`d) is dropped as each object arrives, so the
 * cache never holds it.
 */
export function secretMetadataInformer(config: KubeConfig, namespace: string) {
  const metadataOnly = new MetadataOnlyKubeConfig(config);
  const core = metadataOnly.makeApiClient(CoreV1Api);
  const strip = <T extends KubernetesObject>(object: T): T => {
    if (object.metadata?.annotations) delete object.metadata.annotations[LAST_APPLIED];
    return object;
  };
  const informer = makeInformer<KubernetesObject>(metadataOnly, `/api/v1/namespaces/${namespace}/secrets`, async () => {
    const list = await core.listNamespacedSecret({ namespace });
    // An empty PartialObjectMetadataList comes back with `items: null`, which the informer cannot iterate.
    list.items = (list.items ?? []).map(strip);
    return list as never;
  });
  informer.on('add', strip);
  informer.on('update', strip);
  return informer;
}
