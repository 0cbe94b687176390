// Typed reads of the apiserver's answers. @kubernetes/client-node rejects with an ApiException carrying the HTTP
// status `code` and the Status object as `body` (a JSON string in 2.x, an object in some paths). Every call site in
// dispatcher/ asks through these predicates instead of casting `(error as {code?: number}).code`.
// Kubernetes' own helpers are the model: k8s.io/apimachinery/pkg/api/errors (IsNotFound, IsConflict, IsAlreadyExists).
import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed apiserver call; undefined for anything else (a network error, a bug). */
export function statusCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  // A watch's done callback and older code paths carry the status as `statusCode` or `code` on a plain Error.
  if (error instanceof Error) {
    const { code, statusCode: status } = error as Error & { code?: unknown; statusCode?: unknown };
    if (typeof code === 'number') return code;
    if (typeof status === 'number') return status;
  }
  return undefined;
}

/** The Status object's `reason` (NotFound, Conflict, AlreadyExists, ...), when the body says. */
export function statusReason(error: unknown): string | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body: unknown = error.body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const reason = (parsed as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

export const isNotFound = (error: unknown): boolean => statusCode(error) === 404;

/** A 409 on an update: the resourceVersion precondition failed (someone wrote first). */
export const isConflict = (error: unknown): boolean => statusCode(error) === 409 && statusReason(error) !== 'AlreadyExists';

/** A 409 on a create: the name is taken. */
export const isAlreadyExists = (error: unknown): boolean => statusCode(error) === 409 && (statusReason(error) ?? 'AlreadyExists') === 'AlreadyExists';

/** The error's message for a log line (an ApiException's message holds the whole body: keep the first line). */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message.split('\n')[0]! : String(error));
