import { common as deCommon } from './de/common.js';
import { common as enCommon } from './en/common.js';
import { signup as deSignup } from './de/signup.js';
import { signup as enSignup } from './en/signup.js';

/** English is the reference: every other language must have each of its keys (typed here, tested in ui.test.ts). */
const en = { common: enCommon, signup: enSignup };

export type Catalog = typeof en;

/** One namespace per area of pages, each a file per language (docs/ui.md "Adding text"). */
export const catalogs = {
  en,
  de: { common: deCommon, signup: deSignup },
} satisfies Record<string, Catalog>;

export type Language = keyof typeof catalogs;
export const LANGUAGES = Object.keys(catalogs) as Language[];
