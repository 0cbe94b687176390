// The install's NATS auth Secret (nats/auth: bundle.json, auth.conf, reader.creds), ensured at the dispatcher's
// start: read it; missing, create it from fresh keys; a 409 on that create (another replica won the race) reads the
// one that won. Never updated or replaced: every credential minted since is signed by its keys and the server
// trusts only its operator, so new keys would lock every run and reader out. It is made immutable so nothing else
// (a `helm upgrade`, a stray `kubectl apply`) replaces it either; rotating keys is deleting it (then restarting
// NATS and the dispatcher).
//
// Owner: the dispatcher's ServiceAccount. The Secret is not a Helm-rendered object (Helm would regenerate it, or
// keep a copy of the keys in its release record), so Helm does not delete it; its owner does, through the garbage
// collector. The ServiceAccount is the chart's (`<fullname>-dispatcher`, always rendered): `helm upgrade` keeps it
// (same object, same uid), so the keys survive upgrades, and `helm uninstall` deletes it, so the keys go with the
// install. Not the Deployment: finding it from a Pod goes through its ReplicaSet (more reads, more RBAC); not a
// Pod or ReplicaSet: those are replaced at every rollout. blockOwnerDeletion is left unset: setting it needs update
// on the owner's finalizers, a right the dispatcher has no other use for.
import type { CoreV1Api, V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import { NatsAuthSecretData, generateNatsAuth, parseNatsAuthBundle } from '../../nats/auth/index.ts';
import type { NatsAuthBundle } from '../../nats/auth/index.ts';
import { errorMessage, isAlreadyExists, isNotFound } from '../../kube/errors.ts';

export const AUTH_SECRET_LABELS = { 'app.kubernetes.io/component': 'nats-auth', 'app.kubernetes.io/created-by': 'tcab-dispatcher' } as const;

export interface AuthSecretRef {
  namespace: string;
  name: string;
  /** The dispatcher's ServiceAccount, the Secret's owner; unset (outside a cluster, tests): no owner. */
  serviceAccount?: string;
}

/** The Secret as first created: the generated data, immutable, owned by the ServiceAccount when there is one. Pure. */
export function authSecretBody(ref: AuthSecretRef, data: NatsAuthSecretData, owner?: V1OwnerReference): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: ref.name, namespace: ref.namespace, labels: { ...AUTH_SECRET_LABELS }, ...(owner ? { ownerReferences: [owner] } : {}) },
    type: 'Opaque',
    immutable: true,
    stringData: { ...data },
  };
}

/** The install's bundle from the Secret's data; an error names the Secret and the key, never a value. */
export function bundleFromSecret(ref: AuthSecretRef, secret: V1Secret): NatsAuthBundle {
  const encoded = secret.data?.['bundle.json'];
  if (!encoded) throw new Error(`the NATS auth Secret ${ref.namespace}/${ref.name} has no key bundle.json (create it with \`tcab nats auth init\`, or delete it to have new keys generated)`);
  try {
    return parseNatsAuthBundle(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch (error) {
    // A zod issue names the field; a JSON error quotes a few characters of the text (a seed, maybe): neither the
    // error nor its message goes on, only the field's name.
    const field = (error as { issues?: { path: PropertyKey[] }[] }).issues?.[0]?.path.join('.');
    // eslint-disable-next-line preserve-caught-error -- the cause may quote the Secret's text
    throw new Error(`the NATS auth Secret ${ref.namespace}/${ref.name} has an invalid bundle.json${field ? ` (field ${field})` : ' (not JSON)'}`);
  }
}

async function readSecret(core: CoreV1Api, ref: AuthSecretRef): Promise<V1Secret | undefined> {
  return core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name }).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
}

async function ownerOf(core: CoreV1Api, ref: AuthSecretRef, log: Logger): Promise<V1OwnerReference | undefined> {
  if (!ref.serviceAccount) {
    log.warn({ secret: ref.name }, 'no ServiceAccount to own the NATS auth Secret (TCAB_SERVICE_ACCOUNT unset): it outlives the install until deleted');
    return undefined;
  }
  const account = await core.readNamespacedServiceAccount({ namespace: ref.namespace, name: ref.serviceAccount });
  return { apiVersion: 'v1', kind: 'ServiceAccount', name: ref.serviceAccount, uid: account.metadata!.uid! };
}

/** The install's NATS auth bundle, from its Secret, which is created (once, ever) when missing. */
export async function ensureNatsAuthSecret(core: CoreV1Api, ref: AuthSecretRef, log: Logger, generate: () => Promise<NatsAuthSecretData> = generateNatsAuth): Promise<NatsAuthBundle> {
  const existing = await readSecret(core, ref);
  if (existing) return bundleFromSecret(ref, existing);
  const body = authSecretBody(ref, NatsAuthSecretData.parse(await generate()), await ownerOf(core, ref, log));
  let created: V1Secret;
  try {
    created = await core.createNamespacedSecret({ namespace: ref.namespace, body });
  } catch (error) {
    if (!isAlreadyExists(error)) throw new Error(`creating the NATS auth Secret ${ref.namespace}/${ref.name} failed: ${errorMessage(error)}`, { cause: error });
    log.info({ secret: ref.name }, 'the NATS auth Secret was created meanwhile (another replica): using it');
    const winner = await readSecret(core, ref);
    if (!winner) throw new Error(`the NATS auth Secret ${ref.namespace}/${ref.name} existed at create and is gone now`, { cause: error });
    return bundleFromSecret(ref, winner);
  }
  log.info({ secret: ref.name, owner: ref.serviceAccount }, 'created the NATS auth Secret (new operator, account and reader keys)');
  // The apiserver answers with data (base64), not stringData.
  return bundleFromSecret(ref, created);
}
