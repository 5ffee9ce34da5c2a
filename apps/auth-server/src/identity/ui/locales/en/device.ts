/** Device sign-in (RFC 8628): the code form, its confirmation, the end. */
export const device = {
  inputTitle: 'Connect a device',
  enterCode: 'Enter the code shown on your device.',
  code: 'Code',
  confirmTitle: 'Confirm the device',
  wantsToSignIn: '<strong>{{client}}</strong> wants to sign in. Check that your device shows:',
  ifNot: 'If it does not, or you did not start this, choose Abort.',
  abort: 'Abort',
  connectedTitle: 'Device connected',
  connected: 'You can close this page and return to your device.',
  tooManyCodes: 'Too many wrong codes. Try again later.',
  expired: 'This device sign-in has expired or is not valid here. Start again on your device.',
  errors: {
    notFound: 'That code is not valid. Check it and try again.',
    expired: 'That code has expired. Start again on your device.',
    alreadyUsed: 'That code was already used.',
    aborted: 'The sign-in was cancelled.',
    noCode: 'Enter the code shown on your device.',
    other: 'Something went wrong. Try again.',
  },
};
