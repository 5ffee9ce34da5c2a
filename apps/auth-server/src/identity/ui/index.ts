import type { Context } from 'koa';
import type { Brand, Language, UiSettings } from '../../kernel/ui-settings.js';
import { chooseLanguage, translator, type Translate } from './i18n.js';

export type { Brand, UiSettings } from '../../kernel/ui-settings.js';

export {
  chooseLanguage,
  translator,
  LANGUAGES,
  isLanguage,
  type Language,
  type Translate,
} from './i18n.js';

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
