import { account as deAccount } from './de/account.js';
import { common as deCommon } from './de/common.js';
import { account as enAccount } from './en/account.js';
import { common as enCommon } from './en/common.js';
import { password as dePassword } from './de/password.js';
import { password as enPassword } from './en/password.js';

/** English is the reference: every other language must have each of its keys (typed here, tested in ui.test.ts). */
const en = { common: enCommon, password: enPassword, account: enAccount };

export type Catalog = typeof en;

/** One namespace per area of pages, each a file per language (docs/ui.md "Adding text"). */
export const catalogs = {
  en,
  de: { common: deCommon, password: dePassword, account: deAccount },
} satisfies Record<string, Catalog>;

export type Language = keyof typeof catalogs;
export const LANGUAGES = Object.keys(catalogs) as Language[];
