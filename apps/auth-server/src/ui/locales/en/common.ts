/** Text every page shares; values may hold {{placeholders}} (docs/ui.md). */
export const common = {
  cancel: 'Cancel',
  continue: 'Continue',
  formExpired: 'The form expired. Go back and try again.',
  requestRefused: 'Request refused',
};
