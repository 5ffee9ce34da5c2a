import { expect, test } from '@jest/globals';
import { apiError, returnPath } from './kit.js';
import { timeHtml } from './pages/format.js';
import { permissionLines } from './pages/resource-forms.js';

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

test('an admin API refusal reaches the page as text: its message and field names are escaped', () => {
  const html = apiError({
    status: 400,
    ok: false,
    body: { message: '<img src=x onerror=alert(1)>', fields: { '"><b>': ['a & b'] } },
  }).toString();
  expect(html).toBe(
    '<div class="error" role="alert"><p>&lt;img src=x onerror=alert(1)&gt;</p>' +
      '<ul><li><code>&quot;&gt;&lt;b&gt;</code>: a &amp; b</li></ul></div>',
  );
  expect(apiError({ status: 502, ok: false, body: {} }).toString()).toBe(
    '<div class="error" role="alert"><p>HTTP 502</p></div>',
  );
});

test('an instant the console cannot read is shown as the text it is', () => {
  expect(timeHtml('<script>').toString()).toBe('&lt;script&gt;');
  expect(timeHtml(null).toString()).toBe('—');
  expect(timeHtml('2026-01-02T03:04:05Z').toString()).toBe(
    '<time datetime="2026-01-02T03:04:05.000Z"><span class="nowrap">2026-01-02</span> <span class="nowrap">03:04:05 UTC</span></time>',
  );
});

test("the APIs form's permission lines: the name, then the rest as its description", () => {
  expect(
    permissionLines(
      'invoices:read Read invoices\r\n\n  invoices:write   Create  them \ninvoices:*',
    ),
  ).toEqual([
    { name: 'invoices:read', description: 'Read invoices' },
    { name: 'invoices:write', description: 'Create  them' },
    { name: 'invoices:*' },
  ]);
  expect(permissionLines(' \n')).toEqual([]);
});
