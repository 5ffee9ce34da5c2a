/** The forgotten-password pages and mails (self-service/password-routes.ts). */
export const password = {
  forgotTitle: 'Forgot your password?',
  forgotIntro:
    'Enter the email address of your account. We will send you a link to choose a new password.',
  email: 'Email',
  sendLink: 'Send link',
  sentTitle: 'Check your email',
  sent: 'If an account exists for {{email}}, we sent a link to it. The link works once and for {{minutes}} minutes.',
  backToSignIn: 'Back to sign-in',
  tooMany:
    'Too many requests for this address or from your network. Try again in {{seconds}} seconds.',
  resetTitle: 'Choose a new password',
  newPassword: 'New password',
  save: 'Save password',
  policy: 'At least {{min}} characters.',
  invalidTitle: 'Link not valid',
  invalid: 'This link has expired or was already used. Ask for a new one.',
  askAgain: 'Ask for a new link',
  doneTitle: 'Password changed',
  done: 'Your password was changed and you were signed out everywhere. Sign in with your new password.',
  continueSignIn: 'Continue signing in',
  resetMailSubject: 'Reset your {{product}} password',
  resetMail:
    'Someone asked to reset the password of your {{product}} account.\n\nChoose a new password here (the link works once and for {{minutes}} minutes):\n{{link}}\n\nIf it was not you, ignore this mail: your password stays as it is.',
  forcedMail:
    'An administrator reset the password of your {{product}} account; the old one no longer works.\n\nChoose a new password here (the link works once and for {{minutes}} minutes):\n{{link}}',
  changedMailSubject: 'Your {{product}} password was changed',
  changedMail:
    'The password of your {{product}} account was changed, and every session was signed out.\n\nIf it was not you, reset your password at once: {{link}}',
};
