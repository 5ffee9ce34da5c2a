/** The sign-in page, its errors, and signing out. */
export const signin = {
  title: 'Sign in',
  toContinueTo: 'to continue to <strong>{{client}}</strong>',
  email: 'Email',
  password: 'Password',
  submit: 'Sign in',
  forgotPassword: 'Forgot password?',
  createAccount: 'Create an account',
  invalidCredentials: 'Invalid email or password.',
  tooManyAttempts: 'Too many failed sign-in attempts. Try again in {{seconds}} seconds.',
  or: 'or',
  withPasskey: 'Sign in with a passkey',
  unsupportedTitle: 'Unsupported',
  unsupportedStep: 'This sign-in step is not supported.',
  notInProgress:
    'This page is not part of a sign-in in progress. Start again from the application.',
  otherAccount:
    'This sign-in belongs to another account: finish it with that account’s factor, or start again from the application.',
  logout: {
    title: 'Sign out',
    question: 'Do you want to sign out?',
    yes: 'Yes, sign me out',
    no: 'No, stay signed in',
    doneTitle: 'Signed out',
    done: 'You are signed out.',
  },
};
