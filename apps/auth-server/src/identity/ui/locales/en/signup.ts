/** Sign-up, its mails and the address check (self-service/signup-*.ts); {{placeholders}} are escaped. */
export const signup = {
  title: 'Create an account',
  intro: 'Choose your e-mail address and a password for {{product}}.',
  email: 'Email',
  password: 'Password',
  passwordHint:
    'At least 8 characters. A few unrelated words make a strong one; common passwords are refused.',
  submit: 'Create account',
  backToSignIn: 'Back to sign-in',
  closedTitle: 'Sign-up is closed',
  closed: 'New accounts are not open here. Ask the administrator for one.',
  weakPassword: 'Choose another password: {{reason}}.',
  invalidEmail: 'Enter a valid e-mail address.',
  tooMany: 'Too many requests for this address or network. Try again in {{seconds}} seconds.',
  checkMailTitle: 'Check your mail',
  checkMail:
    'We sent a message to {{email}}. Open the link in it to confirm your address. The link works for {{hours}} hours.',
  verifyTitle: 'Confirm your address',
  verify: 'Confirm that {{email}} is your address.',
  verifySubmit: 'Confirm my address',
  verifiedTitle: 'Address confirmed',
  verified: 'Your address is confirmed. You can sign in now.',
  continueSignIn: 'Continue signing in',
  invalidLinkTitle: 'This link does not work',
  invalidLink: 'The link has expired or was used already. Enter your address to get a new one.',
  unverifiedTitle: 'Verify your address first',
  unverified:
    'Verify your e-mail address first: open the link we mailed you when you signed up, then sign in again.',
  resendTitle: 'Get a new confirmation link',
  resendIntro: 'Enter the address you signed up with.',
  resendSubmit: 'Send a new link',
  resentTitle: 'Check your mail',
  resent:
    'If an account with {{email}} is waiting for its address to be confirmed, we sent it a new link.',
  verifyMailSubject: 'Confirm your address for {{product}}',
  verifyMailText:
    'Hello,\n\nto finish creating your {{product}} account, open this link and confirm your address:\n\n{{link}}\n\nThe link works for {{hours}} hours. If you did not sign up, ignore this message: no account is used without this confirmation.',
  takenMailSubject: 'Someone tried to sign up with your address at {{product}}',
  takenMailText:
    'Hello,\n\nsomeone tried to create a {{product}} account with this address, which already has one. No new account was made.\n\nIf it was you, sign in, or reset your password if you forgot it:\n\n{{signIn}}\n\nIf it was not you, ignore this message.',
};
