import { expect, test } from '@jest/globals';
import { htmlHeaders, httpOrigins } from './security-headers.js';

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

const headersOf = (options: Parameters<typeof htmlHeaders>[2]) => {
  const set: Record<string, string> = {};
  htmlHeaders({ set: (name: string, value: string) => (set[name] = value) } as never, [], options);
  return set['Content-Security-Policy']!;
};
const brand = (logoUrl?: string) => ({
  brand: { productName: 'P', logoUrl, primaryColor: '#000', backgroundColor: '#fff' },
});

test("img-src: 'self', and an https logo's origin only", () => {
  expect(headersOf({})).toContain("img-src 'self';");
  expect(headersOf({ ui: brand() })).toContain("img-src 'self';");
  expect(headersOf({ ui: brand('/static/logo.png') })).toContain("img-src 'self';");
  expect(headersOf({ ui: brand('https://cdn.example.com:8443/a/logo.svg?x=1') })).toContain(
    "img-src 'self' https://cdn.example.com:8443;",
  );
});
