/** The languages the pages ship in; identity/ui/locales holds a catalogue for each (typed). */
export const LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];

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
