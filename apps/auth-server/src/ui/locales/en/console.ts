/** The admin console (console/): shared words here; each page's under its section. */
export const consoleNs = {
  name: '{{product}} console',
  signIn: 'Sign in to the console',
  signOut: 'Sign out',
  signedOut: 'You are signed out of the console',
  nav: {
    status: 'Status',
    clients: 'Clients',
    users: 'Users',
    roles: 'Roles',
    keys: 'Signing keys',
    audit: 'Audit trail',
  },
  refused: {
    title: 'Console access refused',
    expired: 'This sign-in took too long or was started elsewhere. Sign in again.',
    notSignedIn: 'The sign-in did not complete.',
    noSecondFactor: 'The console needs a sign-in with a second factor.',
    notAdmin: 'Only administrators may use the console.',
    adminApi: 'The admin API did not answer. Try again shortly.',
    signedOut: 'Your console session has ended. Sign in again.',
    forged: 'This form has expired or did not come from the console. Open the page again.',
  },
  stepUp: {
    title: 'Confirm it is you',
    explain:
      'This change needs a sign-in from the last {{minutes}} minutes. Sign in again with your second factor, then repeat it.',
    again: 'Sign in again',
  },
  done: {
    saved: 'Saved.',
  },
};
