import { expect, test } from '@jest/globals';
import { returnPath } from './kit.js';

test('the console returns only to its own pages, query included', () => {
  expect(returnPath('/console/audit?kind=user_disabled&actor=a')).toBe(
    '/console/audit?kind=user_disabled&actor=a',
  );
  expect(returnPath('/console')).toBe('/console');
  for (const elsewhere of [
    '//evil.example/console',
    'https://evil.example/console/users',
    '/consoles',
    '/account',
    '/console/../account',
    undefined,
    ['/console/users'],
  ]) {
    expect(returnPath(elsewhere)).toBe('/console');
  }
});
