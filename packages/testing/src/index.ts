// What the tests of every app share, imported as `@portcullis/testing`. It loads no application:
// the auth server for tests is `@portcullis/testing/auth-server`.
export type { AdminResponse, AuthServerHandle, JsonBody } from './server-handle.js';
export { TEST_API_AUDIENCE } from './constants.js';
export { startDocumentServer, type DocumentServer } from './client-documents.js';
export {
  browser,
  CookieJar,
  type Browser,
  type BrowserOptions,
  type StoredCookie,
} from './cookie-jar.js';
export {
  startJwksServer,
  startTestIssuer,
  type JwksServer,
  type TestIssuer,
  type TokenOptions,
} from './issuer.js';
export {
  apiScopeOf,
  createClient,
  createUser,
  decodeJwt,
  discover,
  publicSpa,
  PUBLIC_SPA_METADATA,
  putRole,
  registerResource,
  REDIRECT_URI,
  tokenRequest,
} from './factories.js';
export { accountSignIn, ageSignIn, enrolTotp, submitSecondFactor, totpCode } from './mfa.js';
export { askEmailChange, type EmailChangeAsked } from './email-change.js';
export { startMailbox, type Mailbox, type ReceivedMail } from './mailbox.js';
export { fetchFrom, freePort } from './net.js';
export { rethrow, until } from './poll.js';
export { deleteRedisKeys } from './redis.js';
export {
  approveDevice,
  browserLogin,
  openSignInPage,
  pkceSignIn,
  signsInSilently,
  submitDeviceCode,
  type BrowserLoginOptions,
  type SignInPage,
} from './sign-in.js';
export { denySubjectElsewhere } from './revocations.js';
export { confirmAddress, signUp } from './signup.js';
