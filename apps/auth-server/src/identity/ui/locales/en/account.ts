/** The account page's self-service: password, address, sessions, data, closing (account/). */
export const account = {
  title: 'Your account',
  back: 'Back to your account',
  signIn: 'Sign in',
  signInFirst: 'Sign in to manage your account.',
  signInAgain:
    'To change your account, sign in again first (with your second factor if you have one).',
  tooMany: 'Too many attempts. Try again in {{seconds}} seconds.',
  wrongPassword: 'Your current password is not right.',
  currentPassword: 'Current password',
  none: 'None.',
  gone: 'That is no longer there.',
  sectionTitle: 'Your details',
  linkPassword: 'Change your password',
  linkEmail: 'Change your e-mail address',
  linkSessions: 'Where you are signed in, and apps with access',
  linkData: 'Download your data',
  linkClose: 'Close your account',

  passwordTitle: 'Change your password',
  newPassword: 'New password',
  passwordSubmit: 'Change password',
  passwordRefused: 'The new password is not allowed: {{reason}}.',
  passwordChanged: 'Your password is changed. Everywhere else you are signed out.',
  passwordMailSubject: 'Your password was changed',
  passwordMailText:
    'The password of your account {{email}} was changed at {{at}}.\n\nIf you did not do this, reset your password now and tell the administrator.',

  emailTitle: 'Change your e-mail address',
  newEmail: 'New e-mail address',
  emailSubmit: 'Send a confirmation link',
  emailInvalid: 'Enter a valid e-mail address.',
  emailSame: 'That is already your address.',
  emailTaken: 'That address belongs to another account.',
  emailSent: 'We sent a link to {{email}}. Open it to confirm the change.',
  emailMailSubject: 'Confirm your new e-mail address',
  emailMailText:
    'Open this link to make {{email}} the address of your account:\n\n{{link}}\n\nThe link works once, for {{minutes}} minutes. If you did not ask for this, ignore this mail.',
  confirmTitle: 'Confirm your new e-mail address',
  confirmText: 'Make {{email}} the address of your account?',
  confirmSubmit: 'Confirm',
  confirmInvalid:
    'This link has expired or was already used. Ask for a new one on your account page.',
  emailChanged: 'Your address is now {{email}}. Sign in with it from now on.',
  emailChangedMailSubject: 'Your e-mail address was changed',
  emailChangedMailText:
    'The e-mail address of your account was changed from {{from}} to {{to}} at {{at}}, and it was signed out everywhere else.\n\nIf you did not do this, someone has taken your account, and this address no longer opens it: ask the administrator now to give it back its address {{from}}, then choose a new password here:\n\n{{reset}}',
  emailNoticeSubject: 'A change of your e-mail address was requested',
  emailNoticeText:
    'At {{at}}, someone signed in to your account {{from}} asked to change its address to {{to}}. Nothing changes until the link mailed to {{to}} is opened (within {{minutes}} minutes).\n\nIf this was not you, cancel the change here:\n\n{{link}}\n\nThen choose a new password: whoever asked knows your current one.',
  cancelTitle: 'Cancel the change of your e-mail address',
  cancelText:
    'Keep {{from}} as the address of your account, and cancel the change to {{to}}? Your account is then signed out everywhere.',
  cancelSubmit: 'Cancel the change',
  cancelInvalid:
    'This link has expired or was already used: the change was confirmed, cancelled or replaced by a newer request. If your address was changed without you, ask the administrator to restore it.',
  cancelled:
    'The change is cancelled: your address stays {{email}}, and your account is signed out everywhere. If you did not ask for the change, someone knows your password.',
  chooseNewPassword: 'Choose a new password',

  sessionsTitle: 'Where you are signed in',
  sessionSignedIn: 'Signed in {{at}}',
  sessionThisBrowser: 'This browser',
  sessionApps: 'Apps: {{apps}}',
  sessionEnd: 'Sign out there',
  sessionEnded: 'That session is ended, with the apps signed in through it.',
  sessionsEndOthers: 'Sign out everywhere else',
  sessionsEndedOthers:
    'You are signed out everywhere else, with every app. Links we mailed you before no longer work.',
  appsTitle: 'Apps with access',
  appSince: 'Since {{at}}',
  appScopes: 'Access: {{scopes}}',
  appRevoke: 'Remove access',
  appRevoked: 'The app no longer has access.',

  closeTitle: 'Close your account',
  closeText:
    'This deletes your account, your second factors and your sign-ins at once. Orders and payments stay in the business records, no longer linked to you. This cannot be undone.',
  closeConfirm: 'Type your e-mail address to confirm',
  closeSubmit: 'Close my account',
  closeMismatch: 'That is not the address of this account.',
  closed: 'Your account is closed. Goodbye.',
  closedMailSubject: 'Your account was closed',
  closedMailText:
    'The account {{email}} was closed at {{at}}. Its sign-ins have ended.\n\nIf you did not do this, tell the administrator now.',
};
