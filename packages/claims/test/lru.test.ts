import { describe, expect, it } from '@jest/globals';
import { createLru } from '../src/lru.js';

describe('createLru', () => {
  it('keeps a hot entry while more than its capacity of others come and go', () => {
    const lru = createLru<string, number>(10);
    lru.set('hot', 0);
    for (let i = 0; i < 100; i++) {
      lru.set(`cold${i}`, i);
      expect(lru.get('hot')).toBe(0);
      expect(lru.size).toBeLessThanOrEqual(10);
    }
    // The least recently used went first.
    expect(lru.get('cold0')).toBeUndefined();
    expect(lru.get('cold99')).toBe(99);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => createLru(0)).toThrow(RangeError);
    expect(() => createLru(1.5)).toThrow(RangeError);
  });
});
