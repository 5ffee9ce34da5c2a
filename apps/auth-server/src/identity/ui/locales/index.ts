import { account as deAccount } from './de/account.js';
import { accountPage as deAccountPage } from './de/accountPage.js';
import { common as deCommon } from './de/common.js';
import { consent as deConsent } from './de/consent.js';
import { device as deDevice } from './de/device.js';
import { mfa as deMfa } from './de/mfa.js';
import { password as dePassword } from './de/password.js';
import { signin as deSignin } from './de/signin.js';
import { account as enAccount } from './en/account.js';
import { accountPage as enAccountPage } from './en/accountPage.js';
import { common as enCommon } from './en/common.js';
import { consent as enConsent } from './en/consent.js';
import { device as enDevice } from './en/device.js';
import { mfa as enMfa } from './en/mfa.js';
import { password as enPassword } from './en/password.js';
import { consoleNs as deConsole } from './de/console.js';
import { consoleNs as enConsole } from './en/console.js';
import { signup as deSignup } from './de/signup.js';
import { signup as enSignup } from './en/signup.js';
import { signin as enSignin } from './en/signin.js';

/** English is the reference: every other language must have each of its keys (typed here, tested in ui.test.ts). */
const en = {
  common: enCommon,
  signin: enSignin,
  consent: enConsent,
  device: enDevice,
  mfa: enMfa,
  accountPage: enAccountPage,
  password: enPassword,
  account: enAccount,
  signup: enSignup,
  console: enConsole,
};

export type Catalog = typeof en;

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
} satisfies Record<string, Catalog>;

export type Language = keyof typeof catalogs;
export const LANGUAGES = Object.keys(catalogs) as Language[];
