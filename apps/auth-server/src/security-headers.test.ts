import { expect, test } from '@jest/globals';
import { httpOrigins } from './security-headers.js';

test('a loopback redirect URI allows its host on any port, where /authorize sends the code (RFC 8252 §7.3)', () => {
  expect(httpOrigins(['http://127.0.0.1/callback', 'http://[::1]:8080/cb'])).toEqual([
    'http://127.0.0.1',
    'http://127.0.0.1:*',
    'http://[::1]:8080',
    'http://[::1]:*',
  ]);
});

test('other redirect URIs allow their own origin only', () => {
  expect(
    httpOrigins([
      'https://app.example.com/cb',
      'http://localhost:5173/callback',
      'com.example.app:/cb',
    ]),
  ).toEqual(['https://app.example.com', 'http://localhost:5173']);
});
