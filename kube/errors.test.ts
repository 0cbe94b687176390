import { describe, expect, it } from 'vitest';
import { ApiException } from '@kubernetes/client-node';
import { errorMessage, isAlreadyExists, isConflict, isNotFound, statusCode, statusReason } from './errors.ts';

const status = (code: number, reason?: string, asString = true) => {
  const body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, ...(reason ? { reason } : {}) };
  return new ApiException(code, `HTTP-Code: ${code}\nMessage: x`, asString ? JSON.stringify(body) : body, {});
};

describe('kube error helpers', () => {
  it.each([
    ['404 NotFound', status(404, 'NotFound'), { code: 404, notFound: true, conflict: false, exists: false }],
    ['409 Conflict (update precondition)', status(409, 'Conflict'), { code: 409, notFound: false, conflict: true, exists: false }],
    ['409 AlreadyExists (create), body as object', status(409, 'AlreadyExists', false), { code: 409, notFound: false, conflict: false, exists: true }],
    ['409 without a readable body counts as both (the call site knows which verb it made)', new ApiException(409, 'm', 'not json', {}), { code: 409, notFound: false, conflict: true, exists: true }],
    ['500', status(500, 'InternalError'), { code: 500, notFound: false, conflict: false, exists: false }],
    ['a plain Error', new Error('ECONNRESET'), { code: undefined, notFound: false, conflict: false, exists: false }],
    ['a watch error with statusCode', Object.assign(new Error('gone'), { statusCode: 410 }), { code: 410, notFound: false, conflict: false, exists: false }],
    ['not an Error', { code: 404 }, { code: undefined, notFound: false, conflict: false, exists: false }],
  ])('%s', (_name, error, want) => {
    expect({ code: statusCode(error), notFound: isNotFound(error), conflict: isConflict(error), exists: isAlreadyExists(error) }).toEqual(want);
  });

  it('reads the Status reason and keeps log lines to the first line of the message', () => {
    expect(statusReason(status(404, 'NotFound'))).toBe('NotFound');
    expect(statusReason(new Error('x'))).toBeUndefined();
    expect(errorMessage(status(404, 'NotFound'))).toBe('HTTP-Code: 404');
    expect(errorMessage('text')).toBe('text');
  });
});
