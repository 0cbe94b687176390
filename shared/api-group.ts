// The API coordinates of the project's custom resources, in one place: the CRDs are generated with them
// (deploy/crds.ts), the dispatcher reads and writes Runs under them (kube/resources.ts) and driver Pods
// name their owner Run with them (dispatcher/pods/driver-pod.ts). A second copy would let a version bump miss one.
export const GROUP = 'tcab.dev';
export const VERSION = 'v1alpha1';
/** `apiVersion` of a Run or HarnessConfig object (and of an owner reference to one). */
export const API_VERSION = `${GROUP}/${VERSION}`;
