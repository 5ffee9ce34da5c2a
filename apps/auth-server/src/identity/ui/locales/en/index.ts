import { account as enAccount } from './account.js';
import { accountPage as enAccountPage } from './accountPage.js';
import { common as enCommon } from './common.js';
import { consent as enConsent } from './consent.js';
import { device as enDevice } from './device.js';
import { mfa as enMfa } from './mfa.js';
import { password as enPassword } from './password.js';
import { consoleNs as enConsole } from './console.js';
import { signup as enSignup } from './signup.js';
import { signin as enSignin } from './signin.js';

/** English is the reference: every other language must have each of its keys (typed here, tested in ui.test.ts). */
export const en = {
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
