/** Text every page shares; values may hold {{placeholders}} (docs/ui.md). */
export const common = {
  cancel: 'Cancel',
  continue: 'Continue',
  done: 'Done',
  goBack: 'Go back',
  formExpired: 'The form expired. Go back and try again.',
  requestRefused: 'Request refused',
  anApplication: 'an application',
  signInProblem: 'Sign-in problem',
  unavailable: 'Sign-in is temporarily unavailable. Try again in a few seconds.',
  somethingWrong: 'Something went wrong.',
  interactionExpired:
    'This sign-in request has expired or is not valid here. Start again from the application.',
  signInError: 'Sign-in error',
};
