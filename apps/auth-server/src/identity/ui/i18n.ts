import i18next, { type TFunction } from 'i18next';
import { LANGUAGES, type Language } from '../../kernel/ui-settings.js';
import { catalogs } from './locales/index.js';

export { LANGUAGES, type Language };

const i18n = i18next.createInstance();
// Resources are in memory, so initialisation is synchronous; i18next escapes every
// interpolated value, so a translation is HTML-safe (the catalogues themselves are ours).
void i18n.init({
  resources: catalogs,
  initAsync: false,
  fallbackLng: 'en',
  ns: Object.keys(catalogs.en),
  defaultNS: 'common',
  interpolation: { escapeValue: true },
});

export const isLanguage = (value: string): value is Language =>
  (LANGUAGES as readonly string[]).includes(value);

/** The language of `tag` (`de-CH` → `de`) when we ship it. */
function shipped(tag: string): Language | undefined {
  const primary = tag.trim().toLowerCase().split('-')[0] ?? '';
  return isLanguage(primary) ? primary : undefined;
}

/** RFC 7231 §5.3.5: tags by descending q, `q=0` excluded, `*` ignored. */
function acceptedTags(header: string): string[] {
  return header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((e) => e.tag && e.tag !== '*' && e.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((e) => e.tag);
}

/**
 * The page language: OIDC `ui_locales` (space-separated, by preference), then the
 * browser's Accept-Language, then the deployment's default.
 */
export function chooseLanguage(input: {
  uiLocales?: unknown;
  acceptLanguage?: string | undefined;
  fallback: Language;
}): Language {
  const requested = typeof input.uiLocales === 'string' ? input.uiLocales.split(' ') : [];
  const accepted = acceptedTags((input.acceptLanguage ?? '').slice(0, 1000));
  for (const tag of [...requested.slice(0, 20), ...accepted.slice(0, 20)]) {
    const language = shipped(tag);
    if (language) return language;
  }
  return input.fallback;
}

export type Translate = TFunction;

/** `t('ns:key', { name })` in `language`; the result is HTML-safe. */
export const translator = (language: Language): Translate => i18n.getFixedT(language);
