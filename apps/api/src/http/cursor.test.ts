import { describe, expect, test } from '@jest/globals';
import { createCursorCodec } from './cursor.js';

const key = async () => Buffer.alloc(32, 7);
const codec = createCursorCodec(key, 'users');

describe('HMAC cursors', () => {
  test('round trip', async () => {
    expect(await codec.decode(await codec.encode({ id: 'abc' }))).toEqual({ id: 'abc' });
  });

  test('every tampering is invalid_cursor', async () => {
    const cursor = await codec.encode({ id: 'abc' });
    const [payload, tag] = cursor.split('.') as [string, string];
    const other = await createCursorCodec(key, 'orders').encode({ id: 'abc' });
    const otherKey = await createCursorCodec(async () => Buffer.alloc(32, 8), 'users').encode({
      id: 'abc',
    });
    const lastCharFlipped = tag.slice(0, -1) + (tag.endsWith('A') ? 'B' : 'A');
    for (const bad of [
      `${Buffer.from('{"id":"zzz"}').toString('base64url')}.${tag}`,
      `${payload}.${lastCharFlipped}`,
      `${payload}.`,
      payload,
      '',
      other,
      otherKey,
      `${cursor}.more`,
    ]) {
      await expect(codec.decode(bad)).rejects.toMatchObject({
        status: 400,
        code: 'invalid_cursor',
      });
    }
  });
});
