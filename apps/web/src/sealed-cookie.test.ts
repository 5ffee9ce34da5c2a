import { describe, expect, test } from '@jest/globals';
import { createCookieSealer } from './sealed-cookie.js';

const KEY_A = 'a'.repeat(32);
const KEY_B = 'b'.repeat(32);
const T0 = 1_800_000_000_000;

describe('sealed cookies', () => {
  test('round trip; the value is not readable in the cookie', () => {
    const sealer = createCookieSealer([KEY_A], () => T0);
    const sealed = sealer.seal('rt', 'refresh-token-value', 60);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(Buffer.from(sealed.slice(3), 'base64url').toString('latin1')).not.toContain(
      'refresh-token-value',
    );
    expect(sealer.open('rt', sealed)).toBe('refresh-token-value');
    // Fresh IV each time.
    expect(sealer.seal('rt', 'refresh-token-value', 60)).not.toBe(sealed);
  });

  test('refused: another cookie name, a flipped bit, a truncation, garbage, another key', () => {
    const sealer = createCookieSealer([KEY_A], () => T0);
    const sealed = sealer.seal('rt', { a: 1 }, 60);
    expect(sealer.open('pkce', sealed)).toBeUndefined();
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 20]! ^= 1;
    expect(sealer.open('rt', `v1.${raw.toString('base64url')}`)).toBeUndefined();
    expect(sealer.open('rt', sealed.slice(0, 30))).toBeUndefined();
    expect(sealer.open('rt', 'v1.')).toBeUndefined();
    expect(sealer.open('rt', 'v2.' + sealed.slice(3))).toBeUndefined();
    expect(sealer.open('rt', undefined)).toBeUndefined();
    expect(sealer.open('rt', `v1.${'A'.repeat(5000)}`)).toBeUndefined();
    expect(createCookieSealer([KEY_B], () => T0).open('rt', sealed)).toBeUndefined();
  });

  test('expires inside the ciphertext, whatever the browser keeps', () => {
    let now = T0;
    const sealer = createCookieSealer([KEY_A], () => now);
    const sealed = sealer.seal('pkce', 'x', 600);
    now = T0 + 599_000;
    expect(sealer.open('pkce', sealed)).toBe('x');
    now = T0 + 600_000;
    expect(sealer.open('pkce', sealed)).toBeUndefined();
  });

  test('key rotation: the first key seals, every key opens', () => {
    const old = createCookieSealer([KEY_A], () => T0).seal('rt', 'v', 60);
    const rotated = createCookieSealer([KEY_B, KEY_A], () => T0);
    expect(rotated.open('rt', old)).toBe('v');
    expect(
      createCookieSealer([KEY_A], () => T0).open('rt', rotated.seal('rt', 'w', 60)),
    ).toBeUndefined();
  });

  test('needs a key', () => {
    expect(() => createCookieSealer([])).toThrow(/cookie key/);
  });
});
