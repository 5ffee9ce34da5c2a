import { describe, expect, test } from '@jest/globals';
import { escapeHtml, html, joinHtml, SafeHtml, toHtml, translated, unsafeHtml } from './html.js';
import { translator } from './i18n.js';

describe('html`…`', () => {
  test.each([
    ['&', '&amp;'],
    ['<', '&lt;'],
    ['>', '&gt;'],
    ['"', '&quot;'],
    ["'", '&#39;'],
  ])('escapes %s in text and in attributes', (char, entity) => {
    expect(html`<p title="${char}">${char}</p>`.toString()).toBe(
      `<p title="${entity}">${entity}</p>`,
    );
  });

  test('a plain string is always escaped, markup included', () => {
    const name = '<img src=x onerror=alert(1)>';
    expect(html`<b>${name}</b>`.toString()).toBe('<b>&lt;img src=x onerror=alert(1)&gt;</b>');
    // Already-escaped text is text too: its & is escaped again.
    expect(html`${'&amp;'}`.toString()).toBe('&amp;amp;');
  });

  test('SafeHtml is inserted as is, never escaped twice', () => {
    const inner = html`<i>${'a & b'}</i>`;
    expect(html`<p>${inner}</p>`.toString()).toBe('<p><i>a &amp; b</i></p>');
    expect(html`<div>${html`<p>${inner}</p>`}</div>`.toString()).toBe(
      '<div><p><i>a &amp; b</i></p></div>',
    );
  });

  test('arrays are joined, each item escaped or kept by its kind', () => {
    const items = ['<x>', html`<li>ok</li>`, 3, [html`<br />`, '&']];
    expect(
      html`<ul>
        ${items}
      </ul>`.toString(),
    ).toBe('<ul>&lt;x&gt;<li>ok</li>3<br>&amp;</ul>');
    expect(
      html`<ul>
        ${[]}
      </ul>`.toString(),
    ).toBe('<ul></ul>');
  });

  test('undefined and null give nothing; numbers their digits; 0 and "" are kept', () => {
    expect(html`[${undefined}][${null}][${0}][${''}][${12.5}]`.toString()).toBe('[][][0][][12.5]');
  });

  test('the literal parts are ours, kept as written', () => {
    expect(html`<a href="/x?a=1&amp;b=2">&lt;</a>`.toString()).toBe(
      '<a href="/x?a=1&amp;b=2">&lt;</a>',
    );
    expect(html``.toString()).toBe('');
  });

  test('a SafeHtml cannot be made outside the module', () => {
    const Forge = SafeHtml as unknown as new (mint: symbol, value: string) => SafeHtml;
    expect(() => new Forge(Symbol('SafeHtml'), '<script>')).toThrow(TypeError);
    // A look-alike object is text, not markup.
    const lookalike = { toString: () => '<script>' } as unknown as string;
    expect(html`${lookalike}`.toString()).toBe('&lt;script&gt;');
  });
});

describe('the explicit doors', () => {
  test('unsafeHtml keeps its string as is', () => {
    expect(html`${unsafeHtml('<svg></svg>')}`.toString()).toBe('<svg></svg>');
  });

  test('joinHtml escapes text parts and the separator', () => {
    expect(joinHtml([html`<b>a</b>`, '<c>'], ' & ').toString()).toBe('<b>a</b> &amp; &lt;c&gt;');
  });

  test('toHtml renders at the response boundary like an interpolation', () => {
    expect(toHtml(html`<p>${'<'}</p>`)).toBe('<p>&lt;</p>');
    expect(toHtml('<')).toBe('&lt;');
  });

  test('escapeHtml turns anything into escaped text', () => {
    expect(escapeHtml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(7)).toBe('7');
  });

  test('translated keeps the catalogue markup and escapes the interpolated values', () => {
    const t = translated(translator('en'));
    const line = html`<p>
      ${t('signin:toContinueTo', { client: '<img src=x onerror=alert(1)>' })}
    </p>`;
    expect(line.toString()).toBe(
      '<p>to continue to <strong>&lt;img src=x onerror=alert(1)&gt;</strong></p>',
    );
    expect(t('signin:title')).toBeInstanceOf(SafeHtml);
  });
});
