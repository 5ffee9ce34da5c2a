import type { Translate } from './i18n.js';

/**
 * HTML that is safe to send as is: only `html` (which escapes what it interpolates),
 * `unsafeHtml` and `translated` make one, so a plain string can never pass for markup.
 */
const MINT = Symbol('SafeHtml');

export class SafeHtml {
  readonly #value: string;
  constructor(mint: typeof MINT, value: string) {
    // The symbol is this module's: a SafeHtml made elsewhere would skip the escaping.
    if (mint !== MINT) throw new TypeError('SafeHtml comes from html`…` or unsafeHtml()');
    this.#value = value;
  }
  toString(): string {
    return this.#value;
  }
}

/** What `html` interpolates: markup as is, text escaped, nothing for null/undefined, lists joined. */
export type HtmlValue = SafeHtml | string | number | null | undefined | readonly HtmlValue[];

/** Text for an element or a quoted attribute value: & < > " ' become entities. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(value);
}

/** A template whose every interpolation is escaped unless it is already SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(MINT, out);
}

/** Trusted markup as is (a constant of ours, an encoder's output): each use says why. */
export const unsafeHtml = (trusted: string): SafeHtml => new SafeHtml(MINT, trusted);

/** Joins fragments with `separator` (text, escaped). */
export const joinHtml = (parts: readonly HtmlValue[], separator = ''): SafeHtml =>
  new SafeHtml(MINT, parts.map(render).join(escapeHtml(separator)));

/** Renders a value the way `html` would interpolate it (a page at the response boundary). */
export const toHtml = (value: HtmlValue): string => render(value);

/**
 * `t` whose results are SafeHtml: i18next escapes every interpolated value (i18n.ts) and the
 * catalogues' own markup is ours.
 */
export const translated =
  (t: Translate) =>
  (key: string, options?: Record<string, unknown>): SafeHtml =>
    new SafeHtml(MINT, options === undefined ? t(key) : t(key, options));
