// testNodeCount (local-cluster.ts): TCAB_TEST_NODES as the suite's cluster reads it; a value it cannot start is refused
// before anything starts, naming the variable.
import { describe, expect, it } from 'vitest';
import { testNodeCount } from './local-cluster.ts';

describe('TCAB_TEST_NODES', () => {
  it.each([[undefined, 3], ['', 3], ['1', 1], ['2', 2], ['3', 3]])('%j -> %d nodes', (value, count) => {
    expect(testNodeCount(value)).toBe(count);
  });

  it.each(['0', '4', '-1', '2.5', 'three', ' 2x', '1e9', '../3'])('%j is refused, naming the variable and the value', (value) => {
    expect(() => testNodeCount(value)).toThrow(`TCAB_TEST_NODES must be 1, 2 or 3, got "${value}"`);
  });
});
