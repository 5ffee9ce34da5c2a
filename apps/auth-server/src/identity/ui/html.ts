import type { Translate } from './i18n.js';

const MINT = Symbol('SafeHtml');

/**
 * HTML that is safe to send as is: only `markup` (which escapes what it interpolates),
 * `unsafeHtml` and `translated` make one, so a plain string can never pass for markup.
 */
export class SafeHtml {
  readonly #value: string;
  constructor(mint: typeof MINT, value: string) {
    // The symbol is this module's: a SafeHtml made elsewhere would skip the escaping.
    if (mint !== MINT) throw new TypeError('SafeHtml comes from markup`…` or unsafeHtml()');
    this.#value = value;
  }
  toString(): string {
    return this.#value;
  }
}

/** What `markup` interpolates: markup as is, text escaped, nothing for null/undefined, lists joined. */
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

/**
 * A template whose every interpolation is escaped unless it is already SafeHtml. Not named
 * `html`: Prettier would reformat templates with that tag, and with them the pages' bytes.
 */
export function markup(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
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

/** Renders a value the way `markup` would interpolate it (a page at the response boundary). */
export const toHtml = (value: HtmlValue): string => render(value);

export type TranslateHtml = (key: string, options?: Record<string, unknown>) => SafeHtml;

/**
 * `t` whose results are SafeHtml: i18next escapes every interpolated value (i18n.ts) and the
 * catalogues' own markup is ours.
 */
export const translated =
  (t: Translate): TranslateHtml =>
  (key, options) =>
    new SafeHtml(MINT, options === undefined ? t(key) : t(key, options));
