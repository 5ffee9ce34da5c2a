import { describe, expect, it } from '@jest/globals';
import { constantTimeEqual } from './constant-time.js';

describe('constantTimeEqual', () => {
  it('is true only for the same text or bytes', () => {
    expect(constantTimeEqual('s3cret', 's3cret')).toBe(true);
    expect(constantTimeEqual(Buffer.from('ab'), Buffer.from('ab'))).toBe(true);
    expect(constantTimeEqual('s3cret', 's3creT')).toBe(false);
    expect(constantTimeEqual('s3cret', 's3cret-longer')).toBe(false);
    expect(constantTimeEqual('s3cret', '')).toBe(false);
  });

  it('is false for anything presented that is not text or bytes', () => {
    for (const presented of [undefined, null, 1, ['s3cret'], { s3cret: true }])
      expect(constantTimeEqual('s3cret', presented)).toBe(false);
  });
});
