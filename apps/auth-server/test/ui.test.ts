import { describe, expect, it } from '@jest/globals';
import { chooseLanguage, LANGUAGES, translator } from '../src/identity/ui/index.js';
import { catalogs } from '../src/identity/ui/locales/index.js';
import { OIDC_SCOPES } from '../src/kernel/scopes.js';
import { scopeKey } from '../src/identity/interactions/views.js';

/** Every key path of a catalogue, `ns:a.b`. */
function keys(tree: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([k, v]) =>
    typeof v === 'string'
      ? [`${prefix}${k}`]
      : keys(v as Record<string, unknown>, `${prefix}${k}.`),
  );
}

describe('page languages', () => {
  it('every shipped language has every key of English, and no other', () => {
    const reference = keys(catalogs.en);
    for (const language of LANGUAGES) {
      expect(keys(catalogs[language]).sort()).toEqual([...reference].sort());
      for (const key of keys(catalogs[language])) {
        const [ns, ...rest] = key.split('.');
        const value = translator(language)(`${ns}:${rest.join('.')}`);
        expect(value).not.toBe('');
      }
    }
  });

  it('picks ui_locales, then Accept-Language by q, then the default', () => {
    expect(chooseLanguage({ uiLocales: 'fr de-CH en', fallback: 'en' })).toBe('de');
    expect(chooseLanguage({ acceptLanguage: 'fr;q=1, en;q=0.5, de;q=0.8', fallback: 'en' })).toBe(
      'de',
    );
    expect(chooseLanguage({ uiLocales: 'en', acceptLanguage: 'de', fallback: 'de' })).toBe('en');
    expect(chooseLanguage({ acceptLanguage: 'de;q=0, *', fallback: 'en' })).toBe('en');
    expect(chooseLanguage({ uiLocales: ['de'], acceptLanguage: 'xx', fallback: 'en' })).toBe('en');
  });
});

describe('the consent page in words', () => {
  it('every language describes the OIDC scopes, api and the same permissions as English', () => {
    const english = Object.keys(catalogs.en.consent.scopes).sort();
    for (const scope of [...OIDC_SCOPES, 'api']) expect(english).toContain(scopeKey(scope));
    for (const language of LANGUAGES) {
      const scopes = catalogs[language].consent.scopes as Record<string, string>;
      expect([language, Object.keys(scopes).sort()]).toEqual([language, english]);
    }
  });

  it('a value put into a text is escaped in every language', () => {
    for (const language of LANGUAGES) {
      const text = translator(language)('consent:asksFor', { client: '<img src=x onerror=1>' });
      expect(text).toContain('&lt;img src=x onerror=1&gt;');
      expect(text).not.toContain('<img');
    }
  });
});
