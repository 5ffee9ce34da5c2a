import { describe, expect, test } from '@jest/globals';
import { escapeHtml, joinHtml, markup, SafeHtml, toHtml, translated, unsafeHtml } from './html.js';
import { translator } from './i18n.js';

describe('markup`…`', () => {
  test.each([
    ['&', '&amp;'],
    ['<', '&lt;'],
    ['>', '&gt;'],
    ['"', '&quot;'],
    ["'", '&#39;'],
  ])('escapes %s in text and in attributes', (char, entity) => {
    expect(markup`<p title="${char}">${char}</p>`.toString()).toBe(
      `<p title="${entity}">${entity}</p>`,
    );
  });

  test('a plain string is always escaped, markup included', () => {
    const name = '<img src=x onerror=alert(1)>';
    expect(markup`<b>${name}</b>`.toString()).toBe('<b>&lt;img src=x onerror=alert(1)&gt;</b>');
    // Already-escaped text is text too: its & is escaped again.
    expect(markup`${'&amp;'}`.toString()).toBe('&amp;amp;');
  });

  test('SafeHtml is inserted as is, never escaped twice', () => {
    const inner = markup`<i>${'a & b'}</i>`;
    expect(markup`<p>${inner}</p>`.toString()).toBe('<p><i>a &amp; b</i></p>');
    expect(markup`<div>${markup`<p>${inner}</p>`}</div>`.toString()).toBe(
      '<div><p><i>a &amp; b</i></p></div>',
    );
  });

  test('arrays are joined, each item escaped or kept by its kind', () => {
    const items = ['<x>', markup`<li>ok</li>`, 3, [markup`<br>`, '&']];
    expect(markup`<ul>${items}</ul>`.toString()).toBe('<ul>&lt;x&gt;<li>ok</li>3<br>&amp;</ul>');
    expect(markup`<ul>${[]}</ul>`.toString()).toBe('<ul></ul>');
  });

  test('undefined and null give nothing; numbers their digits; 0 and "" are kept', () => {
    expect(markup`[${undefined}][${null}][${0}][${''}][${12.5}]`.toString()).toBe(
      '[][][0][][12.5]',
    );
  });

  test('the literal parts are ours, kept as written', () => {
    expect(markup`<a href="/x?a=1&amp;b=2">&lt;</a>`.toString()).toBe(
      '<a href="/x?a=1&amp;b=2">&lt;</a>',
    );
    expect(markup``.toString()).toBe('');
  });

  test('a SafeHtml cannot be made outside the module', () => {
    const Forge = SafeHtml as unknown as new (mint: symbol, value: string) => SafeHtml;
    expect(() => new Forge(Symbol('SafeHtml'), '<script>')).toThrow(TypeError);
    // A look-alike object is text, not markup.
    const lookalike = { toString: () => '<script>' } as unknown as string;
    expect(markup`${lookalike}`.toString()).toBe('&lt;script&gt;');
  });
});

describe('the explicit doors', () => {
  test('unsafeHtml keeps its string as is', () => {
    expect(markup`${unsafeHtml('<svg></svg>')}`.toString()).toBe('<svg></svg>');
  });

  test('joinHtml escapes text parts and the separator', () => {
    expect(joinHtml([markup`<b>a</b>`, '<c>'], ' & ').toString()).toBe('<b>a</b> &amp; &lt;c&gt;');
  });

  test('toHtml renders at the response boundary like an interpolation', () => {
    expect(toHtml(markup`<p>${'<'}</p>`)).toBe('<p>&lt;</p>');
    expect(toHtml('<')).toBe('&lt;');
  });

  test('escapeHtml turns anything into escaped text', () => {
    expect(escapeHtml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(7)).toBe('7');
  });

  test('translated keeps the catalogue markup and escapes the interpolated values', () => {
    const t = translated(translator('en'));
    const line = markup`<p>${t('signin:toContinueTo', { client: '<img src=x onerror=alert(1)>' })}</p>`;
    expect(line.toString()).toBe(
      '<p>to continue to <strong>&lt;img src=x onerror=alert(1)&gt;</strong></p>',
    );
    expect(t('signin:title')).toBeInstanceOf(SafeHtml);
  });
});
