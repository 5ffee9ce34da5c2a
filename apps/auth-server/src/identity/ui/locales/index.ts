import { account as deAccount } from './de/account.js';
import { accountPage as deAccountPage } from './de/accountPage.js';
import { common as deCommon } from './de/common.js';
import { consent as deConsent } from './de/consent.js';
import { device as deDevice } from './de/device.js';
import { mfa as deMfa } from './de/mfa.js';
import { password as dePassword } from './de/password.js';
import { signin as deSignin } from './de/signin.js';
import { consoleNs as deConsole } from './de/console.js';
import { signup as deSignup } from './de/signup.js';
import { en, type Catalog } from './en/index.js';
import type { Language } from '../../../kernel/ui-settings.js';

export type { Catalog };

/** One namespace per area of pages, each a file per language (docs/ui.md "Adding text"). */
export const catalogs = {
  en,
  de: {
    common: deCommon,
    signin: deSignin,
    consent: deConsent,
    device: deDevice,
    mfa: deMfa,
    accountPage: deAccountPage,
    password: dePassword,
    account: deAccount,
    signup: deSignup,
    console: deConsole,
  },
} satisfies Record<Language, Catalog>;
