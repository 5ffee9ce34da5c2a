import type { Context } from 'koa';
import { chooseLanguage, translator, type Language, type Translate } from './i18n.js';

export {
  chooseLanguage,
  translator,
  LANGUAGES,
  isLanguage,
  type Language,
  type Translate,
} from './i18n.js';

/** The operator's look on every page (README "Branding and languages"). */
export interface Brand {
  productName: string;
  /** https URL (or a path on the issuer) of a logo shown above each page's title. */
  logoUrl?: string | undefined;
  /** CSS colours: buttons and links, and the page background. */
  primaryColor: string;
  backgroundColor: string;
}

export interface UiSettings {
  defaultLanguage: Language;
  brand: Brand;
}

/** What a page is rendered with: its language, the translations in it, the brand. */
export interface Ui {
  language: Language;
  t: Translate;
  brand: Brand;
}

export interface UiFactory {
  /** `uiLocales`: the OIDC `ui_locales` of the interaction, when there is one. */
  of(ctx: Pick<Context, 'get'>, uiLocales?: unknown): Ui;
  settings: UiSettings;
}

export function createUi(settings: UiSettings): UiFactory {
  return {
    settings,
    of(ctx, uiLocales) {
      const language = chooseLanguage({
        uiLocales,
        acceptLanguage: ctx.get('Accept-Language'),
        fallback: settings.defaultLanguage,
      });
      return { language, t: translator(language), brand: settings.brand };
    },
  };
}
