import { describe, expect, it } from 'vitest';
import { tokenFromHash } from './login-fragment.ts';

describe('tokenFromHash', () => {
  it('reads #token=<token>, percent-decoded', () => {
    expect(tokenFromHash('#token=abc_DEF-123')).toBe('abc_DEF-123');
    expect(tokenFromHash('#token=a%2Bb%3D')).toBe('a+b=');
  });

  it('anything else is no token: other fragments, empty, broken escapes, extra parameters', () => {
    for (const hash of ['', '#', '#seq-42', '#token=', '#token=%E0%A4%A', '#tokens=abc', '#token=a&x=1', '#x=1&token=a', '#token=%20']) expect(tokenFromHash(hash), hash).toBeUndefined();
  });
});
